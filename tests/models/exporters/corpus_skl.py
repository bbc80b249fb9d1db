"""scikit-learn, LightGBM and XGBoost models through skl2onnx and onnxmltools
(scripts/exporter-venv.sh skl), as users convert them: default options, so ZipMap
(a seq(map) output) stays where skl2onnx puts it, and skl2onnx 1.20's duplicate ai.onnx
opset import stays in the file. Expected outputs are the fitted estimator's own
predict / predict_proba on the same float32 inputs.
"""

from __future__ import annotations

import numpy as np
from corpus_common import default_opset
from exporter_lib import Exported, versions

TARGET_OPSET = 17


def _features(seed: int, rows: int = 64, columns: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, columns)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(np.int64) + (x[:, 3] > 1).astype(np.int64)
    return x, y


def _exported(onnx_model, inputs, expected, exporter, modules, tags, notes=(), rtol=1e-4, atol=1e-5) -> Exported:
    return Exported(
        model=onnx_model,
        inputs=inputs,
        expected=expected,
        exporter=exporter,
        framework="scikit-learn",
        modules=modules,
        opset=default_opset(onnx_model),
        tags=["ml", *tags],
        notes=[*notes, f"versions: {versions('scikit-learn', 'skl2onnx', 'onnxmltools', 'lightgbm', 'xgboost')}"],
        rtol=rtol,
        atol=atol,
        # skl2onnx 1.20 lists the ai.onnx opset twice; onnx's checker may reject that. The
        # corpus keeps what users get (the manifest records the checker's verdict).
        must_pass_checker=False,
    )


def scaler_logreg(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = _features(seed)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(x, y)
    onx = to_onnx(model, x[:1], target_opset=TARGET_OPSET)
    test = x[:8]
    proba = model.predict_proba(test)
    # ZipMap: one {class: probability} map per row, compared as a structured array with a
    # field per class (onnxsurgeon.testing.comparable).
    zipmap = np.array([tuple(row) for row in proba], dtype=[(str(c), np.float64) for c in model.classes_])
    names = [i.name for i in onx.graph.input]
    return _exported(
        onx, {names[0]: test}, [model.predict(test), zipmap], "skl2onnx", {}, ["zipmap"], rtol=1e-4, atol=1e-5
    )


def random_forest(seed: int) -> Exported:
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    x, y = _features(seed)
    model = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=seed % 1000).fit(x, y)
    onx = to_onnx(model, x[:1], target_opset=TARGET_OPSET, options={id(model): {"zipmap": False}})
    test = x[:8]
    names = [i.name for i in onx.graph.input]
    return _exported(
        onx, {names[0]: test}, [model.predict(test), model.predict_proba(test).astype(np.float32)], "skl2onnx", {}, []
    )


def onehot_ridge(seed: int) -> Exported:
    import pandas as pd
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(seed)
    rows = 48
    city = rng.choice(["oslo", "lima", "pune", "kyiv"], rows)
    number = rng.standard_normal((rows, 2)).astype(np.float32)
    frame = pd.DataFrame({"city": city, "a": number[:, 0], "b": number[:, 1]})
    target = number[:, 0] * 2 + (city == "lima") - 0.5 * number[:, 1]
    model = Pipeline(
        [
            (
                "columns",
                ColumnTransformer(
                    [
                        ("onehot", OneHotEncoder(handle_unknown="ignore"), ["city"]),
                        ("scale", StandardScaler(), ["a", "b"]),
                    ]
                ),
            ),
            ("ridge", Ridge(alpha=0.5)),
        ]
    ).fit(frame, target)
    initial = [
        ("city", StringTensorType([None, 1])),
        ("a", FloatTensorType([None, 1])),
        ("b", FloatTensorType([None, 1])),
    ]
    onx = to_onnx(model, initial_types=initial, target_opset=TARGET_OPSET)
    test = frame.iloc[:8]
    inputs = {
        "city": test[["city"]].to_numpy().astype(str),
        "a": test[["a"]].to_numpy().astype(np.float32),
        "b": test[["b"]].to_numpy().astype(np.float32),
    }
    expected = model.predict(test).astype(np.float32).reshape(-1, 1)
    return _exported(onx, inputs, [expected], "skl2onnx", {}, ["string-input"], rtol=1e-4, atol=1e-4)


def lgbm_regressor(seed: int) -> Exported:
    import lightgbm
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _features(seed, rows=128)
    target = x[:, 0] * 3 - x[:, 1] ** 2 + 0.1 * y
    model = lightgbm.LGBMRegressor(n_estimators=8, num_leaves=7, min_child_samples=4, verbose=-1).fit(x, target)
    onx = convert_lightgbm(model, initial_types=[("input", FloatTensorType([None, x.shape[1]]))], target_opset=15)
    test = x[:8]
    expected = model.predict(test).astype(np.float32).reshape(-1, 1)
    notes = ["onnxmltools 1.16 converts LightGBM at opset 15 at most"]
    return _exported(onx, {"input": test}, [expected], "onnxmltools", {}, [], notes, rtol=1e-4, atol=1e-4)
