"""The settings file as text and keys: read it (each way it can fail named), flatten its
[sections] into dotted keys, and suggest the key a mistyped one meant. `memd.core.settings`
turns the keys into values of its table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError


def read_config(cfg: Path) -> str | None:
    """The settings file's text, None when there is none; `ConfigError` when it cannot be read."""
    try:
        return cfg.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise ConfigError(
            f"{cfg}: the settings file is a folder",
            hint="move the folder away; the settings file is a TOML file (`memd config` prints one)",
        ) from exc
    except NotADirectoryError:
        return None  # a parent is a file: there is no settings file here
    except PermissionError as exc:
        raise ConfigError(
            f"{cfg}: cannot read the settings file: permission denied",
            hint=f"let your user read it: chmod u+r {cfg} (or fix its owner)",
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{cfg}: not valid TOML: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise ConfigError(f"{cfg}: cannot read the settings file: {exc.strerror or exc}") from exc


def suggest(key: str, known: Sequence[str]) -> str:
    """'did you mean …?' for a mistyped key among the `known` ones, or where to find the keys."""
    import difflib

    # A right name in the wrong section ([server] poll_s = …) first, then a near spelling.
    name = key.rpartition(".")[2]
    close = [k for k in known if k.rpartition(".")[2] == name][:1]
    close = close or difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}? (`memd config` lists every setting)"
    return "`memd config` lists every setting with its help line"


def flatten(doc: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The TOML document's settings by dotted key (`[index] debounce_ms` → `index.debounce_ms`);
    `ConfigError` for a top-level key that is not a section."""
    flat: dict[str, Any] = {}
    for section, body in doc.items():
        if not isinstance(body, dict):
            raise ConfigError(
                f"{where}: top-level key {section!r} is not a [section]",
                hint="settings live in sections, e.g. [index] debounce_ms = 120",
            )
        for name, value in body.items():
            flat[f"{section}.{name}"] = value
    return flat
