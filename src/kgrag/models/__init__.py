"""Models: LLM backends, embedders, rerankers, the local model manager, accounting and the response cache.

Heavy runtimes (llama-cpp-python, onnxruntime, torch) are imported only inside the backend that needs them.
"""
