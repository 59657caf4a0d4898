"""Reads the service's data from a notebook, as the notebook's owner.

Inside a notebook run, IMS_API_URL leads to the service's API through the sandbox's own loopback;
every request acts as the notebook's owner, with exactly the owner's rights, and may only read
(GET). Only Python's standard library is needed; pandas is used where it is installed.

    import ims
    week = ims.history(monitor_id, "temperature", "2026-11-20T00:00:00Z", "2026-11-27T00:00:00Z")
    week["timestamp"][:3], week["value"][:3]          # plain lists
    df = ims.history_frame(monitor_id, "temperature", start, end)   # a pandas DataFrame
    rows = ims.export(monitor_id, start, end)          # the CSV export as a list of dicts
"""
import csv
import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["ImsError", "get", "get_text", "history", "history_frame", "export", "export_frame"]


class ImsError(Exception):
    """The API refused a request: `status` is the HTTP status, the message the API's own text."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def _url(path, params):
    base = os.environ.get("IMS_API_URL")
    if not base:
        raise ImsError(0, "IMS_API_URL is not set: ims reads data only inside a notebook run")
    query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None})
    return base.rstrip("/") + path + ("?" + query if query else "")


def get_text(path, **params):
    """The body of GET `path` (e.g. "/_config/sites/_list") as text."""
    try:
        with urllib.request.urlopen(_url(path, params), timeout=120) as answer:
            return answer.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace")
        try:
            message = json.loads(body).get("error", {}).get("message", body)
        except (ValueError, AttributeError):
            message = body
        raise ImsError(e.code, message) from None


def get(path, **params):
    """The JSON answer of GET `path`."""
    return json.loads(get_text(path, **params))


def _iso(t):
    """A datetime (naive: UTC) or an ISO 8601 string, as the API takes it."""
    if hasattr(t, "isoformat"):
        return t.isoformat() if getattr(t, "tzinfo", None) else t.isoformat() + "Z"
    return str(t)


def history(monitor_id, tag, start, end, points=10000):
    """A tag's history: {"monitor_id", "tag", "tag_unit", "bucket_ms", "timestamp": [ms...], "value": [...], "min", "max", "count"}."""
    answer = get(f"/_cm/monitors/{urllib.parse.quote(monitor_id)}/_history", tag=tag, **{"from": _iso(start), "to": _iso(end)}, points=points)
    points_ = answer.pop("points")
    for key in ("timestamp", "value", "min", "max", "count"):
        answer[key] = [p[key] for p in points_]
    return answer


def history_frame(monitor_id, tag, start, end, points=10000):
    """The history as a pandas DataFrame indexed by time (UTC), columns value, min, max, count."""
    import pandas as pd

    h = history(monitor_id, tag, start, end, points)
    frame = pd.DataFrame({k: h[k] for k in ("value", "min", "max", "count")})
    frame.index = pd.to_datetime(h["timestamp"], unit="ms", utc=True)
    frame.index.name = "timestamp"
    return frame


def export(monitor_id, start, end):
    """Every reading of the monitor in the range: a list of {"timestamp": ISO text, <tag>: float or None}."""
    text = get_text(f"/_cm/monitors/{urllib.parse.quote(monitor_id)}/_export", **{"from": _iso(start), "to": _iso(end)})
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        rows.append({_tag(k): (v if k == "timestamp" else (float(v) if v != "" else None)) for k, v in row.items()})
    return rows


def _tag(name):
    # The export writes a name a spreadsheet would run (=, +, -, @, tab, CR first) behind a quote.
    return name[1:] if name[:1] == "'" and name[1:2] in ("=", "+", "-", "@", "\t", "\r") else name


def export_frame(monitor_id, start, end):
    """The export as a pandas DataFrame indexed by time (UTC), a column per tag."""
    import pandas as pd

    frame = pd.DataFrame(export(monitor_id, start, end))
    if frame.empty:
        return frame
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame.set_index("timestamp")
