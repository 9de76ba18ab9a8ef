"""Nested dicts flattened as Ray's tracking integrations flatten them: {"a": {"b": 1}} -> {"a/b": 1}."""


def flat(values, prefix=""):
    out = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flat(value, name + "/"))
        else:
            out[name] = value
    return out
