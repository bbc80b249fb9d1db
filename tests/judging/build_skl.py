"""Judging-corpus models from the skl venv (scripts/exporter-venv.sh skl): scikit-learn,
XGBoost and LightGBM estimators the development corpus does not have, through skl2onnx and
onnxmltools with default options (ZipMap kept), and onnxconverter-common's float16
conversion (with and without keep_io_types) of models third parties ship in wheels, the
way users halve a downloaded model.

Expected outputs: the estimator's predict / predict_proba / transform; for the float16
conversions, onnxruntime on the converted model (the float32 original is not the
reference: float16 changes results by design).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from corpus_common import default_opset
from exporter_lib import Exported, versions

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "models"))


def _data(seed: int, rows=96, columns=5, classes=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, columns)).astype(np.float32)
    score = x[:, 0] - x[:, 1] + 0.5 * x[:, 2] * x[:, 3]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])).astype(np.int64)
    return x, y


def _exported(onx, inputs, expected, exporter, tags=(), rtol=1e-4, atol=1e-5, notes=()) -> Exported:
    return Exported(
        model=onx,
        inputs=inputs,
        expected=expected,
        exporter=exporter,
        framework="scikit-learn",
        modules={},
        opset=default_opset(onx),
        tags=["ml", *tags],
        rtol=rtol,
        atol=atol,
        notes=[*notes, f"versions: {versions('scikit-learn', 'skl2onnx', 'onnxmltools', 'lightgbm', 'xgboost')}"],
        must_pass_checker=False,
    )


def _zipmap(proba, classes):
    return np.array([tuple(row) for row in proba], dtype=[(str(c), np.float64) for c in classes])


def _classifier(model, seed, zipmap=True, tags=()):
    from skl2onnx import to_onnx

    x, y = _data(seed)
    model.fit(x, y)
    options = None if zipmap else {id(model): {"zipmap": False}}
    onx = to_onnx(model, x[:1], target_opset=17, options=options)
    test = x[:10]
    proba = model.predict_proba(test)
    second = _zipmap(proba, model.classes_) if zipmap else proba.astype(np.float32)
    return _exported(onx, {onx.graph.input[0].name: test}, [model.predict(test), second], "skl2onnx", tags)


def skl_gradient_boosting(seed: int) -> Exported:
    from sklearn.ensemble import GradientBoostingClassifier

    return _classifier(GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0), seed, tags=["zipmap"])


def skl_svc(seed: int) -> Exported:
    from sklearn.svm import SVC

    return _classifier(SVC(probability=True, random_state=0), seed, zipmap=False)


def skl_mlp(seed: int) -> Exported:
    from sklearn.neural_network import MLPClassifier

    return _classifier(MLPClassifier(hidden_layer_sizes=(16,), max_iter=300, random_state=0), seed, tags=["zipmap"])


def skl_knn_regressor(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from sklearn.neighbors import KNeighborsRegressor

    x, y = _data(seed)
    model = KNeighborsRegressor(n_neighbors=3).fit(x, x[:, 0] * 2 + y)
    onx = to_onnx(model, x[:1], target_opset=17)
    test = x[:10] + 0.01
    return _exported(
        onx, {"X": test}, [model.predict(test).astype(np.float32).reshape(-1, 1)], "skl2onnx", rtol=1e-4, atol=1e-4
    )


def skl_pca_kmeans(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    x, _ = _data(seed)
    model = make_pipeline(PCA(n_components=3), KMeans(n_clusters=4, n_init=2, random_state=0)).fit(x)
    onx = to_onnx(model, x[:1], target_opset=17)
    test = x[:10]
    return _exported(
        onx,
        {"X": test},
        [model.predict(test).astype(np.int64), model.transform(test).astype(np.float32)],
        "skl2onnx",
        rtol=1e-4,
        atol=1e-4,
    )


def skl_tfidf_logreg(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    words = ["fast", "slow", "graph", "model", "onnx", "rewrite", "tensor", "shape"]
    rng = np.random.default_rng(seed)
    docs = [" ".join(rng.choice(words, 5)) for _ in range(40)]
    labels = np.array([("onnx" in d) + ("graph" in d) for d in docs], dtype=np.int64)
    model = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=300)).fit(docs, labels)
    onx = to_onnx(
        model,
        initial_types=[("text", StringTensorType([None, 1]))],
        target_opset=17,
        options={id(model[0]): {"locale": "C"}, id(model[-1]): {"zipmap": False}},
    )
    test = np.array(docs[:6]).reshape(-1, 1)
    return _exported(
        onx,
        {"text": test},
        [model.predict(test[:, 0]), model.predict_proba(test[:, 0]).astype(np.float32)],
        "skl2onnx",
        ["string-input"],
        rtol=1e-4,
        atol=1e-5,
    )


def skl_decision_tree_regressor(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from sklearn.tree import DecisionTreeRegressor

    x, y = _data(seed)
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(x, x[:, 1] - y)
    onx = to_onnx(model, x[:1], target_opset=17)
    test = x[:10]
    return _exported(
        onx, {"X": test}, [model.predict(test).astype(np.float32).reshape(-1, 1)], "skl2onnx", rtol=1e-4, atol=1e-4
    )


def xgb_classifier(seed: int) -> Exported:
    import xgboost
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _data(seed)
    model = xgboost.XGBClassifier(n_estimators=6, max_depth=3, learning_rate=0.3).fit(x, y)
    onx = convert_xgboost(model, initial_types=[("input", FloatTensorType([None, x.shape[1]]))], target_opset=15)
    test = x[:10]
    return _exported(
        onx,
        {"input": test},
        [model.predict(test).astype(np.int64), model.predict_proba(test).astype(np.float32)],
        "onnxmltools",
        [],
        rtol=1e-4,
        atol=1e-5,
    )


def lgbm_classifier(seed: int) -> Exported:
    import lightgbm
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _data(seed)
    model = lightgbm.LGBMClassifier(n_estimators=6, num_leaves=7, min_child_samples=4, verbose=-1).fit(x, y)
    onx = convert_lightgbm(
        model, initial_types=[("input", FloatTensorType([None, x.shape[1]]))], target_opset=15, zipmap=False
    )
    test = x[:10]
    return _exported(
        onx,
        {"input": test},
        [model.predict(test).astype(np.int64), model.predict_proba(test).astype(np.float32)],
        "onnxmltools",
        rtol=1e-4,
        atol=1e-5,
    )


# ----------------------------------------------------------- onnxconverter-common fp16


def _fp16(wheel_name: str, keep_io_types: bool, seed: int) -> Exported:
    import onnx
    import onnxruntime as ort
    import wheels
    from onnxconverter_common import float16

    fetch_list = HERE / "wheels.toml"
    entry = next(m for m in wheels.load_list(fetch_list) if m.name == wheel_name)
    model = onnx.load(wheels.fetch_model(entry))
    half = float16.convert_float_to_float16(model, keep_io_types=keep_io_types)
    feeds = wheels.make_inputs(model, entry.sets[0]["inputs"], seed)
    if not keep_io_types:
        feeds = {k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in feeds.items()}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(half.SerializeToString(), options, providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    return Exported(
        model=half,
        inputs=feeds,
        expected=expected,
        exporter="onnxconverter-common",
        framework="onnxconverter-common",
        modules={},
        opset=default_opset(half),
        tags=["fp16", "wheel", *(["keep-io-types"] if keep_io_types else [])],
        rtol=1e-2,
        atol=1e-3,
        notes=[
            f"float16.convert_float_to_float16(keep_io_types={keep_io_types}) of {entry.package}=={entry.version} {entry.member}",
            "expected outputs: onnxruntime on the converted model",
        ],
        must_pass_checker=False,
    )


def fp16_ppocrv6_det_keep_io(seed: int) -> Exported:
    return _fp16("wheel_ppocrv6_det", True, seed)


def fp16_ppocrv6_det(seed: int) -> Exported:
    return _fp16("wheel_ppocrv6_det", False, seed)


def fp16_layout_cdla_keep_io(seed: int) -> Exported:
    return _fp16("wheel_layout_cdla", True, seed)


def fp16_ddddocr_det(seed: int) -> Exported:
    """Not silero-vad: onnxconverter-common 1.16 writes its opset-15 model with a Cast whose
    float16 output feeds a float32 If branch (onnxruntime refuses the result)."""
    return _fp16("wheel_ddddocr_det", False, seed)
