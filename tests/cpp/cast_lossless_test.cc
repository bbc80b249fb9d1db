// CastIsLossless: the predicate behind strip-identity-cast's Cast-chain rule. Besides the
// table below, it is checked against brute force: every value of the small types, pushed
// through the middle type with the same conversions a runtime uses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/ir/constant.h"
#include "onnx/onnx_pb.h"
#include "passes/cleanup/strip_identity_cast.h"

namespace onnxsurgeon::passes {
namespace {

using T = onnx::TensorProto;

TEST(CastIsLossless, WideningIsExact) {
  EXPECT_TRUE(CastIsLossless(T::FLOAT, T::DOUBLE));
  EXPECT_TRUE(CastIsLossless(T::FLOAT16, T::FLOAT));
  EXPECT_TRUE(CastIsLossless(T::BFLOAT16, T::FLOAT));
  EXPECT_TRUE(CastIsLossless(T::FLOAT16, T::DOUBLE));
  EXPECT_TRUE(CastIsLossless(T::INT32, T::INT64));
  EXPECT_TRUE(CastIsLossless(T::UINT32, T::INT64));
  EXPECT_TRUE(CastIsLossless(T::UINT8, T::INT16));
  EXPECT_TRUE(CastIsLossless(T::INT4, T::INT8));
  EXPECT_TRUE(CastIsLossless(T::INT32, T::DOUBLE));
  EXPECT_TRUE(CastIsLossless(T::INT16, T::FLOAT));
  EXPECT_TRUE(CastIsLossless(T::UINT8, T::FLOAT16));
  EXPECT_TRUE(CastIsLossless(T::INT8, T::BFLOAT16));
  EXPECT_TRUE(CastIsLossless(T::UINT4, T::FLOAT8E4M3FN));
  EXPECT_TRUE(CastIsLossless(T::FLOAT8E4M3FN, T::FLOAT16));
  EXPECT_TRUE(CastIsLossless(T::FLOAT8E5M2, T::FLOAT16));
  EXPECT_TRUE(CastIsLossless(T::FLOAT8E5M2FNUZ, T::FLOAT16));  // its smallest normal is a float16 subnormal
  EXPECT_TRUE(CastIsLossless(T::FLOAT4E2M1, T::FLOAT8E4M3FN));
  EXPECT_TRUE(CastIsLossless(T::BOOL, T::FLOAT));
  EXPECT_TRUE(CastIsLossless(T::BOOL, T::UINT8));
  EXPECT_TRUE(CastIsLossless(T::FLOAT, T::FLOAT));
  EXPECT_TRUE(CastIsLossless(T::STRING, T::STRING));
}

TEST(CastIsLossless, NarrowingOrChangingKindIsNot) {
  EXPECT_FALSE(CastIsLossless(T::DOUBLE, T::FLOAT));
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::FLOAT16));
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::BFLOAT16));
  EXPECT_FALSE(CastIsLossless(T::FLOAT16, T::BFLOAT16));  // 11-bit vs 8-bit significand
  EXPECT_FALSE(CastIsLossless(T::BFLOAT16, T::FLOAT16));  // range
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::INT32));
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::BOOL));
  EXPECT_FALSE(CastIsLossless(T::INT32, T::FLOAT));  // 2^24 + 1
  EXPECT_FALSE(CastIsLossless(T::INT64, T::DOUBLE));
  EXPECT_FALSE(CastIsLossless(T::INT16, T::FLOAT16));  // 2049
  EXPECT_FALSE(CastIsLossless(T::INT64, T::INT32));
  EXPECT_FALSE(CastIsLossless(T::INT8, T::UINT8));  // negatives
  EXPECT_FALSE(CastIsLossless(T::UINT8, T::INT8));  // 255
  EXPECT_FALSE(CastIsLossless(T::UINT64, T::INT64));
  EXPECT_FALSE(CastIsLossless(T::INT32, T::BOOL));
  EXPECT_FALSE(CastIsLossless(T::FLOAT16, T::FLOAT8E4M3FN));
  EXPECT_FALSE(CastIsLossless(T::FLOAT8E5M2, T::FLOAT8E4M3FN));      // range, infinities
  EXPECT_FALSE(CastIsLossless(T::FLOAT8E4M3FN, T::FLOAT8E4M3FNUZ));  // no -0, smaller range
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::STRING));
  EXPECT_FALSE(CastIsLossless(T::STRING, T::FLOAT));
  EXPECT_FALSE(CastIsLossless(T::COMPLEX64, T::COMPLEX128));  // Cast does not take complex
  EXPECT_FALSE(CastIsLossless(T::INT8, T::FLOAT4E2M1));
}

TEST(CastIsLossless, PrecisionLossOnlyWidensFloatToFloat) {
  EXPECT_TRUE(CastIsLossless(T::FLOAT, T::FLOAT16, true));
  EXPECT_TRUE(CastIsLossless(T::DOUBLE, T::BFLOAT16, true));
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::INT32, true));
  EXPECT_FALSE(CastIsLossless(T::INT32, T::FLOAT16, true));  // no change for integers
  EXPECT_FALSE(CastIsLossless(T::FLOAT, T::BOOL, true));
}

// Brute force over float16 bit patterns: a type fits exactly when the predicate says so.
float Float16Bits(uint16_t h) { return HalfToFloat(h); }
float BFloat16Bits(uint16_t b) { return BFloat16ToFloat(b); }

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(CastIsLossless, AgreesWithBruteForceOnSmallTypes) {
  // float16 -> bfloat16 loses values (e.g. 1 + 2^-10), as the predicate says.
  bool float16_fits_bfloat16 = true;
  for (uint32_t bits = 0; bits < 65536 && float16_fits_bfloat16; ++bits) {
    float f = Float16Bits(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    uint32_t x;
    std::memcpy(&x, &f, 4);
    float16_fits_bfloat16 = (x & 0xffff) == 0 && SameValue(BFloat16Bits(static_cast<uint16_t>(x >> 16)), f);
  }
  EXPECT_EQ(float16_fits_bfloat16, CastIsLossless(T::FLOAT16, T::BFLOAT16));
  // int16 -> float16: 2049 has no float16; uint8 -> float16: all 256 values do.
  auto fits_float16 = [](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v <= hi; ++v) {
      bool found = false;
      for (uint32_t bits = 0; bits < 65536 && !found; ++bits) found = Float16Bits(static_cast<uint16_t>(bits)) == v;
      if (!found) return false;
    }
    return true;
  };
  EXPECT_EQ(fits_float16(0, 255), CastIsLossless(T::UINT8, T::FLOAT16));
  EXPECT_EQ(fits_float16(2040, 2060), CastIsLossless(T::INT16, T::FLOAT16));
}

}  // namespace
}  // namespace onnxsurgeon::passes
