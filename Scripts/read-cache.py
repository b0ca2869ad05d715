#!/usr/bin/env python3
"""An independent reader of a FlatCache folder (format 1), written from
docs/format.md alone, with no FlatCache code: the check that the page is
enough to write a reader without guessing. Prints one JSON object:

  {"channels": [url, ...], "users": [id, ...],
   "messages": {"<key>": [id, ...]},          # the newest N, oldest first
   "continuity": {"<key>": {"ranges": [[lo, hi], ...], "token": str|null}},  # when something is known
   "channelsToken": str|null, "usage": {"<key>": [saved, used]},
   "outbox": [{"requestID", "channelURL", "queuedAt", "state", "attempts",
               "reason", "messageID", "text"}, ...],   # live entries, queue order
   "damaged": [path, ...]}

Usage: Scripts/read-cache.py <cache folder> [N, default 200]
FlatCacheTests.IndependentReaderTests runs it on the golden folders and
compares its output with what FlatCache reads.
"""
import base64
import hashlib
import json
import os
import re
import stat
import sys

class Damaged(Exception):
    pass


def regular_file(path):
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


def read_data_file(path):
    """The record bytes of a data file, None when missing; raises Damaged."""
    kind = regular_file(path)
    if kind is None:
        return None
    sidecar_path = path + ".sha256"
    if not kind or regular_file(sidecar_path) is False:
        raise Damaged("not a regular file")
    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(path).encode()

    def line_for(digest):
        return digest.encode() + b"  " + name + b"\n"

    actual = hashlib.sha256(data).hexdigest()
    sidecar = open(sidecar_path, "rb").read() if regular_file(sidecar_path) else None
    recorded = None
    if sidecar is not None and re.fullmatch(rb"[0-9a-f]{64}  " + re.escape(name) + rb"\n", sidecar):
        recorded = sidecar[:64].decode()
    if recorded != actual:
        # A replace cut between the renames: the waiting sidecar names the data.
        waiting = os.path.join(os.path.dirname(path), "." + os.path.basename(sidecar_path) + ".tmp")
        if regular_file(waiting) and open(waiting, "rb").read() == line_for(actual):
            pass
        elif recorded is None:
            raise Damaged("missing or malformed sidecar")
        else:
            # An unfinished append: the empty prefix, then each prefix ending a line, shortest first.
            ends = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
            match = next((end for end in ends if hashlib.sha256(data[:end]).hexdigest() == recorded), None)
            if match is None:
                raise Damaged("digest mismatch")
            data = data[:match]
    if data and not data.endswith(b"\n"):
        raise Damaged("no final newline")
    records = []
    for line in data.split(b"\n")[:-1]:
        try:
            raw = base64.b64decode(line, validate=True)
        except Exception:
            raise Damaged("bad Base64")
        if base64.b64encode(raw) != line:
            raise Damaged("Base64 not canonical")
        records.append(raw)
    return records


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def bytes(self):
        """A length-prefixed byte field: the length as a string's, then the bytes."""
        length, shift = 0, 0
        for index in range(4):
            b = self.byte()
            length |= (b & 0x7F) << shift
            shift += 7
            if b & 0x80 == 0:
                if b == 0 and index > 0:
                    raise Damaged("length not shortest")
                break
        else:
            raise Damaged("length longer than 4 bytes")
        return self.take(length)

    def take(self, count):
        if count < 0 or self.at + count > len(self.data):
            raise Damaged("bytes missing")
        part = self.data[self.at:self.at + count]
        self.at += count
        return part

    def byte(self):
        return self.take(1)[0]

    def int64(self):
        return int.from_bytes(self.take(8), "little", signed=True)

    def flag(self):
        value = self.byte()
        if value > 1:
            raise Damaged("flag out of range")
        return value

    def string(self):
        try:
            return self.bytes().decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise Damaged("invalid UTF-8")

    def version(self, known=(1,)):
        value = self.byte()
        if value not in known:
            raise Damaged("unknown version")
        return value

    def end(self):
        if self.at != len(self.data):
            raise Damaged("bytes left over")


def user(r):
    r.version()
    return {"userID": r.string(), "nickname": r.string(), "profileURL": r.string()}


def message(r):
    version = r.version((1, 2))
    m = {"messageID": r.int64(), "createdAt": r.int64(), "updatedAt": r.int64()}
    if r.byte() > 1:
        raise Damaged("kind out of range")
    m["channelURL"] = r.string()
    m["text"], m["customType"], m["data"] = r.string(), r.string(), r.string()
    if r.flag():
        m["sender"] = user(r)
    if version == 2:  # version 1's fields, then the request id
        m["requestID"] = r.string()
    return m


def channel(r):
    r.version()
    c = {"channelURL": r.string()}
    if r.byte() > 1:
        raise Damaged("kind out of range")
    c["name"], c["coverURL"], c["memberCount"], c["createdAt"] = r.string(), r.string(), r.int64(), r.int64()
    if r.flag():
        c["lastMessage"] = message(r)
    return c


def decode_all(records, decode):
    out = []
    for raw in records:
        r = Reader(raw)
        out.append(decode(r))
        r.end()
    return out


def continuity(records):
    if len(records) != 1:
        raise Damaged("not one record")
    r = Reader(records[0])
    r.version()
    flags = r.byte()
    if flags > 3:
        raise Damaged("flags")
    anchor = (r.int64(), r.take(8))
    token = r.string()
    count = r.int64()
    if count < 0 or len(r.data) - r.at != 16 * count:
        raise Damaged("range count")
    ranges = []
    for _ in range(count):
        lo, hi = r.int64(), r.int64()
        if lo > hi or (ranges and not lo - 1 > ranges[-1][1]):
            raise Damaged("ranges out of order")
        ranges.append([lo, hi])
    return (anchor if flags & 1 else None), (token if flags & 2 else None), ranges


OUTBOX_STATES = ["pending", "sending", "failed", "sent", "cancelled"]


def outbox_record(r):
    """One line of outbox.lines: one state of one entry."""
    r.version()
    e = {"requestID": r.string()}
    if not e["requestID"]:
        raise Damaged("empty request id")
    e["channelURL"], e["queuedAt"] = r.string(), r.int64()
    state = r.byte()
    if state >= len(OUTBOX_STATES):
        raise Damaged("state out of range")
    e["state"], e["attempts"], e["reason"] = OUTBOX_STATES[state], r.int64(), r.string()
    queued = Reader(r.bytes())
    e["message"] = message(queued)
    queued.end()
    if e["message"]["channelURL"] != e["channelURL"]:
        raise Damaged("the message is in another channel than the line says")
    server = r.bytes()
    if server:
        answer = Reader(server)
        e["serverMessage"] = message(answer)
        answer.end()
    elif e["state"] == "sent":
        raise Damaged("a sent line without the server's message")
    return e


def fold_outbox(lines):
    """The live entries of the log, in queue order: the last line of each
    request id wins, its place is its first line (or, queued again after it
    left, the line that queued it again), sent and cancelled go."""
    order, last = [], {}
    gone = ("sent", "cancelled")
    for entry in lines:
        rid = entry["requestID"]
        previous = last.get(rid)
        if previous is None:
            order.append(rid)
        elif previous["state"] in gone and entry["state"] not in gone:
            order.remove(rid)
            order.append(rid)
        last[rid] = entry
    live = [last[i] for i in order if last[i]["state"] not in ("sent", "cancelled")]
    return [{"requestID": e["requestID"], "channelURL": e["channelURL"], "queuedAt": e["queuedAt"],
             "state": e["state"], "attempts": e["attempts"], "reason": e["reason"],
             "messageID": e["message"]["messageID"], "text": e["message"]["text"]} for e in live]


def main():
    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    if open(os.path.join(root, "format"), "rb").read() != b"flatcache 1\n":
        sys.exit("not a FlatCache 1 folder")
    out = {"channels": [], "users": [], "messages": {}, "continuity": {}, "channelsToken": None, "usage": {},
           "outbox": [], "damaged": []}

    def load(relative, decode):
        try:
            records = read_data_file(os.path.join(root, relative))
            return None if records is None else decode(records)
        except Damaged:
            out["damaged"].append(relative)
            return None

    channels = load("channels.lines", lambda rs: decode_all(rs, channel))
    out["channels"] = [c["channelURL"] for c in channels or []]
    if channels is not None:
        token = load("channels.continuity", continuity)
        out["channelsToken"] = token[1] if token else None
    out["users"] = [u["userID"] for u in load("users.lines", lambda rs: decode_all(rs, user)) or []]
    def usage_record(r):
        # Version 1 is 49 bytes; version 2 adds the message file's inode, size
        # and modification time (24 bytes, 73 in all). Any other length is damage.
        version = r.byte()
        if version not in (1, 2) or len(r.data) != (49 if version == 1 else 73):
            raise Damaged("not a usage record")
        key, times = r.take(32).hex(), [r.int64(), r.int64()]
        if version == 2:
            r.take(24)
        return key, times

    # Any order; of a key given twice, the later line's times.
    out["usage"] = dict(load("usage.lines", lambda rs: decode_all(rs, usage_record)) or [])
    out["outbox"] = load("outbox.lines", lambda rs: fold_outbox(decode_all(rs, outbox_record))) or []
    folder = os.path.join(root, "messages")
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    for name in names:
        if not re.fullmatch(r"[0-9a-f]{64}\.lines", name):
            continue
        key = name[:-6]
        messages = load("messages/" + name, lambda rs: decode_all(rs, message))
        if messages is None:
            continue
        newest = messages[-n:]
        out["messages"][key] = [m["messageID"] for m in newest]
        found = load("messages/" + key + ".continuity", continuity)
        if found is None:
            continue
        anchor, token, ranges = found
        if newest:
            oldest = newest[0]
            digest = hashlib.sha256(str(oldest["messageID"]).encode()).digest()[:8]
            if anchor is None or anchor != (oldest["createdAt"], digest):
                cut = oldest["createdAt"]
                ranges = [[max(lo, cut + 1), hi] for lo, hi in ranges if hi > cut]
        if ranges or token is not None:  # else nothing is known: the same as no file
            out["continuity"][key] = {"ranges": ranges, "token": token}
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
