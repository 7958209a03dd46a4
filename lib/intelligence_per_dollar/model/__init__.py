"""The model: pure functions, no I/O. Architecture (shapes, FLOPs, bytes), efficiency curves,
collectives, training, inference, post-training, economics, uncertainty."""
