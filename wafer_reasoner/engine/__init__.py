"""The in-process inference engine: tokenizer, prompt layout and the ONNX decoder with a KV cache."""
