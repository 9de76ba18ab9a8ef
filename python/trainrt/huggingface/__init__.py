"""Ray Train's Hugging Face integrations (`ray.train.huggingface`) on trainrt: see
trainrt.huggingface.transformers (docs/guides/transformers.md)."""
