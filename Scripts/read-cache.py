#!/usr/bin/env python3
"""An independent reader of a FlatCache folder (format 1 or 2), written from
docs/format.md alone, with no FlatCache code: the check that the page is
enough to write a reader without guessing. Prints one JSON object:

  {"channels": [url, ...], "users": [id, ...],   # appended lines applied
   "messages": {"<key>": [id, ...]},          # the newest N, oldest first, appended lines applied
   "continuity": {"<key>": {"ranges": [[lo, hi], ...], "token": str|null}},  # when something is known
   "channelsToken": str|null, "usage": {"<key>": [saved, used]},
   "outbox": [{"requestID", "channelURL", "queuedAt", "state", "attempts",
               "reason", "messageID", "text"}, ...],   # live entries, queue order
   "damaged": [path, ...]}

Usage: Scripts/read-cache.py <cache folder> [N, default 200] [--key-file <file>]
The key file holds an encrypted folder's key: 32 raw bytes, or 64 hex digits
(a final newline allowed). In an encrypted folder the keys of "messages",
"continuity" and "usage" are the message files' names (HMAC-SHA256 of the
channel URL under the key), as stored.
FlatCacheTests.IndependentReaderTests runs it on the golden folders and
compares its output with what FlatCache reads.
"""
import base64
import ctypes
import ctypes.util
import hmac
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


class AESGCM:
    """AES-256-GCM opening through OpenSSL's libcrypto (EVP), by ctypes:
    Python's standard library has no AES."""
    NONCE, TAG = 12, 16
    CTRL_SET_IVLEN, CTRL_SET_TAG = 0x9, 0x11

    def __init__(self):
        path = ctypes.util.find_library("crypto") or "libcrypto.so.3"
        lib = ctypes.CDLL(path)
        lib.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
        lib.EVP_CIPHER_CTX_free.argtypes = [ctypes.c_void_p]
        lib.EVP_aes_256_gcm.restype = ctypes.c_void_p
        lib.EVP_DecryptInit_ex.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.EVP_CIPHER_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        lib.EVP_DecryptUpdate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_int]
        lib.EVP_DecryptFinal_ex.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        self.lib = lib

    def open(self, key, sealed, associated):
        """The plaintext of nonce || ciphertext || tag, or None when it does not open."""
        if len(sealed) < self.NONCE + self.TAG:
            return None
        nonce, body, tag = sealed[:self.NONCE], sealed[self.NONCE:-self.TAG], sealed[-self.TAG:]
        lib, ctx = self.lib, self.lib.EVP_CIPHER_CTX_new()
        try:
            out = ctypes.create_string_buffer(len(body) + 16)
            n = ctypes.c_int(0)
            tag_buffer = ctypes.create_string_buffer(tag, len(tag))
            ok = (lib.EVP_DecryptInit_ex(ctx, lib.EVP_aes_256_gcm(), None, None, None) == 1
                  and lib.EVP_CIPHER_CTX_ctrl(ctx, self.CTRL_SET_IVLEN, self.NONCE, None) == 1
                  and lib.EVP_DecryptInit_ex(ctx, None, None, key, nonce) == 1
                  and lib.EVP_DecryptUpdate(ctx, None, ctypes.byref(n), associated, len(associated)) == 1
                  and lib.EVP_DecryptUpdate(ctx, out, ctypes.byref(n), body, len(body)) == 1)
            if not ok:
                return None
            written = n.value
            if lib.EVP_CIPHER_CTX_ctrl(ctx, self.CTRL_SET_TAG, self.TAG, tag_buffer) != 1:
                return None
            if lib.EVP_DecryptFinal_ex(ctx, ctypes.byref(out, written), ctypes.byref(n)) != 1:
                return None  # the tag does not match: another file, another key, a changed byte
            return out.raw[:written + n.value]
        finally:
            lib.EVP_CIPHER_CTX_free(ctx)


def key_id(key):
    """The first 8 bytes of HMAC-SHA256(key, "flatcache key id"), lowercase hex."""
    return hmac.new(key, b"flatcache key id", hashlib.sha256).hexdigest()[:16]


class Keys:
    """The keys an encrypted folder's lines may be under: the folder's, and
    during a key change the other side's (None for plain) too."""

    def __init__(self, keys):
        self.keys, self.cipher = keys, AESGCM() if any(keys) else None

    def open(self, lines, name):
        """The records of the lines of the data file `name`, each a pair
        (kind, bytes): kind None for a canonical line, b"*" or b"-" for an
        appended one (format 2), which seals with the kind in its associated
        data. Under the first key that opens them all (a file is under one
        key); raises Damaged."""
        def associated(kind):
            if kind is None:
                return b"flatcache 1 " + name.encode()
            return b"flatcache 2 " + kind + b" " + name.encode()

        for key in self.keys:
            if key is None:
                return lines
            opened = [(kind, self.cipher.open(key, line, associated(kind))) for kind, line in lines]
            if all(record is not None for _, record in opened):
                return opened
        raise Damaged("a line does not open")


PLAIN = Keys([None])


def read_data_file(path, keys=PLAIN):
    """The lines of a data file as (kind, record bytes) pairs, kind None for a
    canonical line and b"*" or b"-" for an appended one (format 2); None when
    missing; raises Damaged."""
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
        # An appended line: "*" (upsert) then a record's Base64, or "-" (deletion)
        # then a key's Base64; appended lines come after every canonical line.
        mark = line[:1] if line[:1] in (b"*", b"-") else None
        if mark is not None:
            line = line[1:]
        elif records and records[-1][0] is not None:
            raise Damaged("a canonical line after an appended one")
        try:
            raw = base64.b64decode(line, validate=True)
        except Exception:
            raise Damaged("bad Base64")
        if base64.b64encode(raw) != line:
            raise Damaged("Base64 not canonical")
        records.append((mark, raw))
    return keys.open(records, os.path.basename(path))


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


def applied(records, appended, decode, key, deleted, order):
    """A file's records: its canonical lines' records, then each appended line
    applied in file order by key (an upsert replaces or adds, a deletion
    removes, or does nothing when the key is not held); with appended lines,
    in canonical order (`order`, a sort key). A deletion's payload is a key,
    not a record: `deleted` gives the key it names, or raises Damaged."""
    decoded = decode_all(records, decode)
    if not appended:
        return decoded  # as the file holds them
    by_key = {key(x): x for x in decoded}
    for kind, raw in appended:
        if kind == b"*":
            x = decode_all([raw], decode)[0]
            by_key[key(x)] = x
        else:
            by_key.pop(deleted(raw), None)
    return sorted(by_key.values(), key=order)


def deleted_message_id(raw):
    """For ChatMessage, the id's 8 bytes little-endian (two's complement);
    any other length is damage."""
    if len(raw) != 8:
        raise Damaged("a deletion's message id is not 8 bytes")
    return int.from_bytes(raw, "little", signed=True)


def deleted_string(raw):
    """A channel URL's or user id's UTF-8 bytes, not empty: compared as bytes."""
    if not raw:
        raise Damaged("a deletion's key is empty")
    try:
        raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise Damaged("a deletion's key is not UTF-8")
    return raw


def messages_applied(records, appended=()):
    """A message file's records, by messageID, in createdAt then messageID order."""
    return applied(records, appended, message, lambda m: m["messageID"], deleted_message_id,
                   lambda m: (m["createdAt"], m["messageID"]))


def channels_applied(records, appended=()):
    """channels.lines' records, by channelURL's UTF-8 bytes; in order key
    descending (the last message's createdAt when there is one, else the
    channel's), then channelURL ascending by UTF-8 bytes."""
    def order_key(c):
        return c["lastMessage"]["createdAt"] if "lastMessage" in c else c["createdAt"]
    return applied(records, appended, channel, lambda c: c["channelURL"].encode(), deleted_string,
                   lambda c: (-order_key(c), c["channelURL"].encode()))


def users_applied(records, appended=()):
    """users.lines' records, by userID's UTF-8 bytes, in that order."""
    return applied(records, appended, user, lambda u: u["userID"].encode(), deleted_string,
                   lambda u: u["userID"].encode())


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


def read_key(path):
    data = open(path, "rb").read()
    if len(data) == 32:
        return data
    text = data.decode("ascii", errors="replace").strip()
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        return bytes.fromhex(text)
    sys.exit("a key file holds 32 bytes or 64 hex digits")


def folder_keys(root, key):
    """The keys to open the folder's lines with, from `records` (and `rekey`,
    when a key change is under way); exits when the key does not fit."""
    records = open(os.path.join(root, "records"), "rb").read() if regular_file(os.path.join(root, "records")) else b""
    lines = records.split(b"\n")
    recorded = None
    if len(lines) == 5 and lines[3].startswith(b"encryption aes-256-gcm "):
        recorded = lines[3][len(b"encryption aes-256-gcm "):].decode()
    given = key_id(key) if key is not None else None
    rekey_path = os.path.join(root, "rekey")
    if regular_file(rekey_path):
        fields = dict(line.split(" ", 1) for line in open(rekey_path).read().splitlines())
        ids = {side: (None if fields[side] == "plain" else fields[side]) for side in ("from", "to")}
        if given not in ids.values():
            sys.exit("a key change is under way between %s and %s" % (ids["from"] or "plain", ids["to"] or "plain"))
        mine = "to" if ids["to"] == given else "from"
        other = "from" if mine == "to" else "to"
        if ids[other] is None:
            return Keys([key, None])
        if key is None:
            sys.exit("the folder is encrypted with key " + ids[other])
        wrapped = base64.b64decode(fields[other + "-key"], validate=True)
        other_key = AESGCM().open(key, wrapped, b"flatcache 1 rekey")
        if other_key is None or key_id(other_key) != ids[other]:
            sys.exit("the rekey file does not open with this key")
        return Keys([key, other_key])
    if recorded != given:
        sys.exit("the folder is encrypted with key %s" % recorded if recorded else "the folder is not encrypted")
    return Keys([key])


def main():
    arguments = sys.argv[1:]
    key = None
    if "--key-file" in arguments:
        at = arguments.index("--key-file")
        key = read_key(arguments[at + 1])
        del arguments[at:at + 2]
    root = arguments[0]
    n = int(arguments[1]) if len(arguments) > 1 else 200
    marker = open(os.path.join(root, "format"), "rb").read()
    if marker not in (b"flatcache 1\n", b"flatcache 2\n"):
        sys.exit("not a FlatCache 1 or 2 folder")
    keys = folder_keys(root, key)
    out = {"channels": [], "users": [], "messages": {}, "continuity": {}, "channelsToken": None, "usage": {},
           "outbox": [], "damaged": []}

    def load(relative, decode, appends=False):
        """`decode` of the file's canonical records, and of its appended lines
        when it has some: only message files, channels.lines and users.lines
        (`appends`) may, whatever the folder's marker says; in any other file
        (outbox.lines, usage.lines, continuity files) an appended line is damage."""
        try:
            lines = read_data_file(os.path.join(root, relative), keys)
            if lines is None:
                return None
            records = [raw for kind, raw in lines if kind is None]
            appended = [(kind, raw) for kind, raw in lines if kind is not None]
            if not appended:
                return decode(records)
            if not appends:
                raise Damaged("appended lines in a file that never holds them")
            return decode(records, appended)
        except Damaged:
            out["damaged"].append(relative)
            return None

    channels = load("channels.lines", channels_applied, appends=True)
    out["channels"] = [c["channelURL"] for c in channels or []]
    if channels is not None:
        token = load("channels.continuity", continuity)
        out["channelsToken"] = token[1] if token else None
    out["users"] = [u["userID"] for u in load("users.lines", users_applied, appends=True) or []]
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
        messages = load("messages/" + name, messages_applied, appends=True)
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
