"""ray.tune.utils's names that Ray's examples import (mock_trainable)."""
