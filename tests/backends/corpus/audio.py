"""Speech encoders (transformers, small random configs) and a VAD, batch 1, fixed length."""

from __future__ import annotations

from common import picked

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
# Two conv feature layers (stride 5 then 2): 1600 samples give 159 frames.
CONV = dict(conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16)


def _wav2vec2(opset):
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    cfg = Wav2Vec2Config(vocab_size=12, num_conv_pos_embedding_groups=4, **SMALL, **CONV)
    return picked(Wav2Vec2ForCTC(cfg), "logits"), {"audio": ("randn", (1, 1600))}, ["logits"], opset


def _hubert(opset):
    from transformers import HubertConfig, HubertModel

    cfg = HubertConfig(num_conv_pos_embedding_groups=4, **SMALL, **CONV)
    return picked(HubertModel(cfg)), {"audio": ("randn", (1, 1600))}, ["last_hidden_state"], opset


def _whisper_encoder(opset):
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    cfg = WhisperConfig(
        vocab_size=100,
        num_mel_bins=16,
        d_model=32,
        encoder_layers=2,
        encoder_attention_heads=4,
        encoder_ffn_dim=64,
        max_source_positions=20,
    )
    # The encoder takes exactly 2 * max_source_positions mel frames.
    return picked(WhisperEncoder(cfg)), {"mel": ("randn", (1, 16, 40))}, ["last_hidden_state"], opset


def _vad(opset):
    import torch
    from torch import nn

    class ConvLSTMVAD(nn.Module):
        """Silero-style: a strided Conv1d front end over raw audio, conv blocks, an LSTM
        over frames, a per-frame speech probability."""

        def __init__(self):
            super().__init__()
            self.frontend = nn.Conv1d(1, 16, 64, stride=32, padding=16)
            self.blocks = nn.Sequential(
                nn.Conv1d(16, 16, 3, padding=1), nn.BatchNorm1d(16), nn.ReLU(), nn.Conv1d(16, 24, 3, 2, 1), nn.ReLU()
            )
            self.lstm = nn.LSTM(24, 24, batch_first=True)
            self.head = nn.Linear(24, 1)

        def forward(self, x):
            f = self.blocks(self.frontend(x.unsqueeze(1)).abs())  # (1, 24, T)
            return torch.sigmoid(self.head(self.lstm(f.transpose(1, 2))[0])).squeeze(-1)

    return ConvLSTMVAD(), {"audio": ("randn", (1, 1024))}, ["speech_prob"], opset


def _kws_cnn(opset):
    from torch import nn

    class KeywordCNN(nn.Module):
        """Keyword spotting over MFCC frames: depthwise-separable Conv2d blocks, pooled
        classifier."""

        def __init__(self):
            super().__init__()

            def ds(c):
                return nn.Sequential(
                    nn.Conv2d(c, c, 3, 1, 1, groups=c), nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c, 1), nn.ReLU()
                )

            self.stem = nn.Sequential(nn.Conv2d(1, 16, (5, 3), (2, 2), (2, 1)), nn.BatchNorm2d(16), nn.ReLU())
            self.blocks = nn.Sequential(ds(16), ds(16))
            self.fc = nn.Linear(16, 8)

        def forward(self, x):
            return self.fc(self.blocks(self.stem(x)).mean((2, 3))).softmax(-1)

    return KeywordCNN(), {"mfcc": ("randn", (1, 1, 49, 10))}, ["probs"], opset


MODELS = {
    "wav2vec2_ctc_op14_b1": lambda: _wav2vec2(14),
    "hubert_op17_b1": lambda: _hubert(17),
    "whisper_encoder_op17_b1": lambda: _whisper_encoder(17),
    "vad_conv_lstm_op13_b1": lambda: _vad(13),
    "kws_dscnn_op13_b1": lambda: _kws_cnn(13),
}
