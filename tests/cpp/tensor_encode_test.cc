// Tensor::FromDoubles / FromInt64s / FromUInt64s: one encoder for every numeric element type. Floating
// types round once to nearest even (float16 and bfloat16 straight from double); integer
// types are exact or refused.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/ir/constant.h"
#include "core/ir/tensor.h"
#include "gtest/gtest.h"

namespace onnxsurgeon {
namespace {

using DT = onnx::TensorProto;

template <typename T>
std::vector<T> Elements(const Tensor& t) {
  std::vector<T> out(t.raw_bytes().size() / sizeof(T));
  std::memcpy(out.data(), t.raw_bytes().data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
std::vector<T> Encode(int32_t dt, const std::vector<double>& values) {
  auto t = Tensor::FromDoubles(dt, {static_cast<int64_t>(values.size())}, values);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  EXPECT_EQ(t->meta().data_type(), dt);
  EXPECT_EQ(t->raw_bytes().size(), values.size() * sizeof(T));
  return Elements<T>(*t);
}

bool Refused(int32_t dt, double v) { return !Tensor::FromDoubles(dt, {}, {v}).ok(); }

TEST(TensorEncode, Float) {
  auto f = Encode<float>(DT::FLOAT, {1.0, 0.1, -2.5, 1e39, -1e39, 1e-46});
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], static_cast<float>(0.1));
  EXPECT_EQ(f[2], -2.5f);
  EXPECT_EQ(f[3], std::numeric_limits<float>::infinity());  // overflow: inf, not undefined behaviour
  EXPECT_EQ(f[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[5], 0.0f);  // below half the least subnormal
  EXPECT_TRUE(std::isnan(Encode<float>(DT::FLOAT, {std::nan("")})[0]));
}

TEST(TensorEncode, Double) {
  auto d = Encode<double>(DT::DOUBLE, {0.1, -1e300, 5e-324});
  EXPECT_EQ(d, (std::vector<double>{0.1, -1e300, 5e-324}));
}

TEST(TensorEncode, Float16RoundsToNearestEven) {
  const double u = std::ldexp(1.0, -11);  // half an ulp of 1.0 in float16
  auto h = Encode<uint16_t>(DT::FLOAT16, {1.0, -2.0, 65504, 65519.99, 65520, std::ldexp(1.0, -24), std::ldexp(1.0, -25),
                                          1.5 * std::ldexp(1.0, -25), 1 + u, 1 + 3 * u, std::ldexp(1.0, -14),
                                          std::ldexp(1.0, -14) - std::ldexp(1.0, -25), 0.0, -0.0});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3C00, 0xC000, 0x7BFF, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0001, 0x3C00, 0x3C02,
                                      0x0400, 0x0400, 0x0000, 0x8000}));
  // Straight from double: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up. Through
  // float (which drops the 2^-40) it would be a tie and round down to 1.0.
  EXPECT_EQ(Encode<uint16_t>(DT::FLOAT16, {1 + u + std::ldexp(1.0, -40)})[0], 0x3C01);
  EXPECT_EQ(Encode<uint16_t>(DT::FLOAT16, {std::numeric_limits<double>::infinity()})[0], 0x7C00);
  uint16_t nan = Encode<uint16_t>(DT::FLOAT16, {std::nan("")})[0];
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(TensorEncode, BFloat16RoundsToNearestEven) {
  const double u = std::ldexp(1.0, -8);  // half an ulp of 1.0 in bfloat16
  auto b = Encode<uint16_t>(DT::BFLOAT16, {1.0, 3.0, -1.0, 1 + u, 1 + 3 * u, 1 + u + std::ldexp(1.0, -40), 1e39});
  EXPECT_EQ(b, (std::vector<uint16_t>{0x3F80, 0x4040, 0xBF80, 0x3F80, 0x3F82, 0x3F81, 0x7F80}));
}

// For values a float holds exactly, the encoder agrees with the float converters
// (FloatToHalf / FloatToBFloat16, which match onnxruntime's) bit for bit, subnormals included.
TEST(TensorEncode, HalfTypesAgreeWithFloatConverters) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i) {
    uint32_t x = bits(rng);
    if (i % 2) x = (x & 0x807FFFFFu) | ((0x66u + (x >> 23) % 0x2Au) << 23);  // half the draws near float16's range
    float f;
    std::memcpy(&f, &x, 4);
    if (!std::isnan(f)) values.push_back(f);
  }
  auto h = Encode<uint16_t>(DT::FLOAT16, values);
  auto b = Encode<uint16_t>(DT::BFLOAT16, values);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(h[i], FloatToHalf(static_cast<float>(values[i]))) << values[i];
    ASSERT_EQ(b[i], FloatToBFloat16(static_cast<float>(values[i]))) << values[i];
  }
}

TEST(TensorEncode, SignedIntegers) {
  EXPECT_EQ(Encode<int8_t>(DT::INT8, {-128, 127, 0}), (std::vector<int8_t>{-128, 127, 0}));
  EXPECT_EQ(Encode<int16_t>(DT::INT16, {-32768, 32767}), (std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(Encode<int32_t>(DT::INT32, {-2147483648.0, 2147483647.0}), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(Encode<int64_t>(DT::INT64, {-0x1p63, 0x1p62}), (std::vector<int64_t>{INT64_MIN, int64_t{1} << 62}));
  EXPECT_TRUE(Refused(DT::INT8, 128));
  EXPECT_TRUE(Refused(DT::INT8, -129));
  EXPECT_TRUE(Refused(DT::INT16, 32768));
  EXPECT_TRUE(Refused(DT::INT32, 2147483648.0));
  EXPECT_TRUE(Refused(DT::INT64, 0x1p63));
  EXPECT_TRUE(Refused(DT::INT32, 1.5));  // a fraction is not an integer
  EXPECT_TRUE(Refused(DT::INT64, std::nan("")));
  EXPECT_TRUE(Refused(DT::INT64, std::numeric_limits<double>::infinity()));
}

TEST(TensorEncode, UnsignedIntegersAndBool) {
  EXPECT_EQ(Encode<uint8_t>(DT::UINT8, {0, 255}), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(Encode<uint16_t>(DT::UINT16, {65535}), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(Encode<uint32_t>(DT::UINT32, {4294967295.0}), (std::vector<uint32_t>{UINT32_MAX}));
  EXPECT_EQ(Encode<uint64_t>(DT::UINT64, {0x1p63}), (std::vector<uint64_t>{uint64_t{1} << 63}));
  EXPECT_TRUE(Refused(DT::UINT8, -1));
  EXPECT_TRUE(Refused(DT::UINT8, 256));
  EXPECT_TRUE(Refused(DT::UINT16, 65536));
  EXPECT_TRUE(Refused(DT::UINT32, 4294967296.0));
  EXPECT_TRUE(Refused(DT::UINT64, 0x1p64));
  EXPECT_TRUE(Refused(DT::UINT64, -1));
  EXPECT_EQ(Encode<uint8_t>(DT::BOOL, {0, 1, 2, -0.5}), (std::vector<uint8_t>{0, 1, 1, 1}));  // nonzero is true
}

TEST(TensorEncode, FromInt64sIsExact) {
  auto t = Tensor::FromInt64s(DT::INT64, {3}, {INT64_MAX, INT64_MIN, (int64_t{1} << 53) + 1});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Elements<int64_t>(*t), (std::vector<int64_t>{INT64_MAX, INT64_MIN, (int64_t{1} << 53) + 1}));
  auto i32 = Tensor::FromInt64s(DT::INT32, {2}, {INT32_MIN, INT32_MAX});
  ASSERT_TRUE(i32.ok());
  EXPECT_EQ(Elements<int32_t>(*i32), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  auto u64 = Tensor::FromInt64s(DT::UINT64, {1}, {INT64_MAX});
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Elements<uint64_t>(*u64)[0], static_cast<uint64_t>(INT64_MAX));
  auto b = Tensor::FromInt64s(DT::BOOL, {}, {7});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Elements<uint8_t>(*b), (std::vector<uint8_t>{1}));
  auto h = Tensor::FromInt64s(DT::FLOAT16, {2}, {2049, 2051});  // ties: to even
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(Elements<uint16_t>(*h), (std::vector<uint16_t>{0x6800, 0x6802}));
  EXPECT_FALSE(Tensor::FromInt64s(DT::INT32, {}, {int64_t{1} << 31}).ok());
  EXPECT_FALSE(Tensor::FromInt64s(DT::INT8, {}, {-129}).ok());
  EXPECT_FALSE(Tensor::FromInt64s(DT::UINT64, {}, {-1}).ok());
  EXPECT_FALSE(Tensor::FromInt64s(DT::UINT32, {}, {int64_t{1} << 32}).ok());
}

// BitwiseNot's all-ones mask (passes/opset/decompose.cc): a uint64 beyond int64 is exact.
TEST(TensorEncode, FromUInt64sIsExact) {
  auto u64 = Tensor::FromUInt64s(DT::UINT64, {2}, {UINT64_MAX, uint64_t{1} << 63});
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(Elements<uint64_t>(*u64), (std::vector<uint64_t>{UINT64_MAX, uint64_t{1} << 63}));
  auto u8 = Tensor::FromUInt64s(DT::UINT8, {}, {255});
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->meta().dims_size(), 0);
  EXPECT_EQ(Elements<uint8_t>(*u8), (std::vector<uint8_t>{255}));
  auto u32 = Tensor::FromUInt64s(DT::UINT32, {}, {UINT32_MAX});
  ASSERT_TRUE(u32.ok());
  EXPECT_EQ(Elements<uint32_t>(*u32), (std::vector<uint32_t>{UINT32_MAX}));
  auto i64 = Tensor::FromUInt64s(DT::INT64, {}, {uint64_t{INT64_MAX}});
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(Elements<int64_t>(*i64), (std::vector<int64_t>{INT64_MAX}));
  auto i8 = Tensor::FromUInt64s(DT::INT8, {}, {1});
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(Elements<int8_t>(*i8), (std::vector<int8_t>{1}));
  auto b = Tensor::FromUInt64s(DT::BOOL, {}, {uint64_t{1} << 40});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Elements<uint8_t>(*b), (std::vector<uint8_t>{1}));
  EXPECT_FALSE(Tensor::FromUInt64s(DT::UINT8, {}, {256}).ok());
  EXPECT_FALSE(Tensor::FromUInt64s(DT::INT8, {}, {128}).ok());
  EXPECT_FALSE(Tensor::FromUInt64s(DT::INT64, {}, {uint64_t{1} << 63}).ok());
  EXPECT_FALSE(Tensor::FromUInt64s(DT::UINT32, {}, {uint64_t{1} << 32}).ok());
  EXPECT_FALSE(Tensor::FromUInt64s(DT::STRING, {}, {1}).ok());
}

TEST(TensorEncode, ShapeAndTypeErrors) {
  auto scalar = Tensor::FromDoubles(DT::FLOAT, {}, {1.0});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->meta().dims_size(), 0);
  auto matrix = Tensor::FromDoubles(DT::INT64, {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(matrix.ok());
  EXPECT_EQ(matrix->meta().dims_size(), 2);
  EXPECT_EQ(matrix->storage(), TensorStorage::kRaw);
  EXPECT_FALSE(Tensor::FromDoubles(DT::FLOAT, {2}, {1.0}).ok());   // count != dims
  EXPECT_FALSE(Tensor::FromDoubles(DT::FLOAT, {-1}, {}).ok());     // negative dim
  EXPECT_FALSE(Tensor::FromDoubles(DT::STRING, {1}, {1.0}).ok());  // not numeric
  EXPECT_FALSE(Tensor::FromDoubles(DT::COMPLEX64, {1}, {1.0}).ok());
  EXPECT_FALSE(Tensor::FromInt64s(DT::UNDEFINED, {1}, {1}).ok());
}

}  // namespace
}  // namespace onnxsurgeon
