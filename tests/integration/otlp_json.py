# SPDX-License-Identifier: GPL-2.0
"""What an OpenTelemetry Collector received: the lines the tests' jsonfile
exporter wrote (tests/otelcol/jsonfile.go), one OTLP/JSON profiles request
each, read the way a backend would (strings through the dictionary, as
pdata writes them: keys and values by index or inline).

  otlp_json.py requests FILE
      one line per request: its interval's UTC start to the second, its
      resources, its samples/count total, and its start in nanoseconds
  otlp_json.py frames FILE SERVICE
      the frames of SERVICE's samples (every service's with '*'), one line
      each: samples function frame-type (the samples/count of every sample
      whose stack has it)
  otlp_json.py resources FILE
      every resource's attributes, one line each: key=value ...
"""
import collections
import datetime
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def strings(req):
    return req.get("dictionary", {}).get("stringTable", [])


def key_of(req, kv):
    if "key" in kv:
        return kv["key"]
    return strings(req)[kv.get("keyStrindex", 0)]


def value_of(req, v):
    if "stringValue" in v:
        return v["stringValue"]
    if "stringValueStrindex" in v:
        return strings(req)[v["stringValueStrindex"]]
    if "intValue" in v:
        return str(int(v["intValue"]))
    if not v:
        return ""
    return json.dumps(v)


def resource_attrs(req, rp):
    return {key_of(req, kv): value_of(req, kv.get("value", {}))
            for kv in rp.get("resource", {}).get("attributes", [])}


def profiles(rp):
    for sp in rp.get("scopeProfiles", []):
        for p in sp.get("profiles", []):
            yield p


def sample_type(req, p):
    st = p.get("sampleType", {})
    return strings(req)[st.get("typeStrindex", 0)] + "/" + strings(req)[st.get("unitStrindex", 0)]


def utc_name(ns):
    t = datetime.datetime.fromtimestamp(int(ns) // 1000000000, datetime.timezone.utc)
    return t.strftime("%Y%m%dT%H%M%SZ")


def cmd_requests(reqs):
    for req in reqs:
        total, start, services = 0, None, []
        for rp in req.get("resourceProfiles", []):
            services.append(resource_attrs(req, rp).get("service.name", "?"))
            for p in profiles(rp):
                start = start or p.get("timeUnixNano")
                if sample_type(req, p) == "samples/count":
                    total += sum(int(s["values"][0]) for s in p.get("samples", []))
        print(utc_name(start or 0), len(services), total, int(start or 0))


def frame_names(req, stack_index):
    d = req["dictionary"]
    stack = d["stackTable"][stack_index] if stack_index else {}
    attrs = d.get("attributeTable", [])
    for li in stack.get("locationIndices", []):
        loc = d["locationTable"][li] if li else {}
        ftype = "?"
        for ai in loc.get("attributeIndices", []):
            a = attrs[ai]
            if strings(req)[a.get("keyStrindex", 0)] == "profile.frame.type":
                ftype = value_of(req, a.get("value", {}))
        for line in loc.get("lines", []):
            fn = d["functionTable"][line.get("functionIndex", 0)]
            yield strings(req)[fn.get("nameStrindex", 0)], ftype


def cmd_frames(reqs, service):
    seen = collections.Counter()
    for req in reqs:
        for rp in req.get("resourceProfiles", []):
            if service != "*" and resource_attrs(req, rp).get("service.name") != service:
                continue
            for p in profiles(rp):
                if sample_type(req, p) != "samples/count":
                    continue
                for s in p.get("samples", []):
                    n = int(s["values"][0])
                    for name_type in set(frame_names(req, s.get("stackIndex", 0))):
                        seen[name_type] += n
    for (name, ftype), n in sorted(seen.items()):
        print(n, name, ftype)


def cmd_resources(reqs):
    for req in reqs:
        for rp in req.get("resourceProfiles", []):
            attrs = sorted(resource_attrs(req, rp).items())
            # one line each: a command line may hold a line break
            print(" ".join("%s=%s" % (k, v.replace("\n", "\\n")) for k, v in attrs))


def main():
    what, path = sys.argv[1], sys.argv[2]
    reqs = load(path)
    if what == "requests":
        cmd_requests(reqs)
    elif what == "frames":
        cmd_frames(reqs, sys.argv[3])
    elif what == "resources":
        cmd_resources(reqs)
    else:
        sys.exit("otlp_json.py: unknown command " + what)


try:
    main()
except BrokenPipeError:  # a reader that had enough (grep -q)
    sys.exit(0)
