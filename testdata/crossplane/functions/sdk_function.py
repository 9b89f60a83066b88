"""A composition function for krmgraph's tests, written with the Crossplane
Python function SDK (crossplane-function-sdk-python, PyPI) and served on a
loopback port: `python sdk_function.py [--beta-only]` binds 127.0.0.1:0,
prints the port on the first line of stdout and serves until SIGTERM
or until its parent process is gone.

Its step's `input` says what it does, in this order (every key optional):

  resources:   {name: resource}  composed resources to add
  ready:       {name: True|False} their readiness
  xrReady:     True|False         the composite's readiness
  status:      {...}              merged into the XR's status
  conditions:  [{type, status, reason, message}]
  results:     [{severity: Normal|Warning|Fatal, message}]
  context:     {...}              keys added to the context
  dropContext: true               return no context at all
  copyContext: field              XR status.<field> = the context it got
  require:     {key: {apiVersion, kind, matchName | matchLabels}}
               required resources; the names found go to status.required
  requireSchema: {key: {apiVersion, kind}}
               required schemas; status.schemas = what came back for each
               (the schema, or null when it was not found)
  unstable:    true               new requirements on every call
  copyObserved: true              status.observed = observed resource names
  copyCredentials: name           status.credentials = that credential's keys
  countCalls:  true               status.calls = calls of this step so far
  sleepMs:     N                  take N ms (asynchronously), as a real
                                  function's work or API calls would

`--beta-only` serves only the v1beta1 service, so a client must fall back.
"""

import asyncio
import os
import sys

import grpc
from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1

SEVERITY = {
    "Normal": fnv1.SEVERITY_NORMAL,
    "Warning": fnv1.SEVERITY_WARNING,
    "Fatal": fnv1.SEVERITY_FATAL,
}
STATUS = {
    "True": fnv1.STATUS_CONDITION_TRUE,
    "False": fnv1.STATUS_CONDITION_FALSE,
    "Unknown": fnv1.STATUS_CONDITION_UNKNOWN,
}


def ready(value):
    return fnv1.READY_TRUE if value else fnv1.READY_FALSE


def compose(req, rsp, calls):
    spec = resource.struct_to_dict(req.input) if req.HasField("input") else {}
    status = {}
    for name, body in spec.get("resources", {}).items():
        rsp.desired.resources[name].resource.update(body)
    for name, value in spec.get("ready", {}).items():
        rsp.desired.resources[name].ready = ready(value)
    if "xrReady" in spec:
        rsp.desired.composite.ready = ready(spec["xrReady"])
    status.update(spec.get("status", {}))
    for c in spec.get("conditions", []):
        cond = rsp.conditions.add()
        cond.type = c["type"]
        cond.status = STATUS[c.get("status", "True")]
        cond.reason = c.get("reason", "")
        if "message" in c:
            cond.message = c["message"]
    for r in spec.get("results", []):
        result = rsp.results.add()
        result.severity = SEVERITY[r["severity"]]
        result.message = r["message"]
    for key, value in spec.get("context", {}).items():
        rsp.context[key] = value
    if "copyContext" in spec:
        status[spec["copyContext"]] = resource.struct_to_dict(req.context)
    for key, sel in spec.get("require", {}).items():
        selector = rsp.requirements.resources[key]
        selector.api_version = sel["apiVersion"]
        selector.kind = sel["kind"]
        if "matchName" in sel:
            selector.match_name = sel["matchName"]
        else:
            selector.match_labels.labels.update(sel.get("matchLabels", {}))
    if spec.get("require"):
        status["required"] = {
            key: sorted(item.resource["metadata"]["name"] for item in found.items)
            for key, found in sorted(req.required_resources.items())
        }
    for key, sel in spec.get("requireSchema", {}).items():
        selector = rsp.requirements.schemas[key]
        selector.api_version = sel["apiVersion"]
        selector.kind = sel["kind"]
    if spec.get("requireSchema"):
        status["schemas"] = {
            key: (resource.struct_to_dict(found.openapi_v3) if found.HasField("openapi_v3") else None)
            for key, found in sorted(req.required_schemas.items())
        }
    if spec.get("unstable"):
        selector = rsp.requirements.resources[f"call-{calls}"]
        selector.api_version = "v1"
        selector.kind = "ConfigMap"
        selector.match_name = "anything"
    if spec.get("copyObserved"):
        status["observed"] = sorted(req.observed.resources.keys())
    if "copyCredentials" in spec:
        data = req.credentials[spec["copyCredentials"]].credential_data.data
        status["credentials"] = {k: v.decode() for k, v in sorted(data.items())}
    if spec.get("countCalls"):
        status["calls"] = calls
    if status:
        current = resource.struct_to_dict(rsp.desired.composite.resource)
        merged = dict(current.get("status", {}))
        merged.update(status)
        rsp.desired.composite.resource.update({"status": merged})
    if spec.get("dropContext"):
        rsp.ClearField("context")


class Runner(grpcv1.FunctionRunnerServiceServicer):
    def __init__(self):
        self.calls = {}

    async def RunFunction(self, req, _context):
        step = resource.struct_to_dict(req.input).get("name", "") if req.HasField("input") else ""
        self.calls[step] = self.calls.get(step, 0) + 1
        if req.HasField("input") and "sleepMs" in req.input:
            await asyncio.sleep(req.input["sleepMs"] / 1000)
        rsp = response.to(req)
        compose(req, rsp, self.calls[step])
        return rsp


class BetaRunner(grpcv1beta1.FunctionRunnerServiceServicer):
    def __init__(self):
        self.runner = Runner()

    async def RunFunction(self, req, context):
        v1req = fnv1.RunFunctionRequest()
        v1req.ParseFromString(req.SerializeToString())
        rsp = await self.runner.RunFunction(v1req, context)
        out = fnv1beta1.RunFunctionResponse()
        out.ParseFromString(rsp.SerializeToString())
        return out


async def exit_with_parent():
    """Stop when the process that started this one is gone."""
    parent = os.getppid()
    while os.getppid() == parent:
        await asyncio.sleep(0.5)
    os._exit(0)


async def main():
    server = grpc.aio.server()
    if "--beta-only" in sys.argv:
        grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(BetaRunner(), server)
    else:
        grpcv1.add_FunctionRunnerServiceServicer_to_server(Runner(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    asyncio.get_running_loop().create_task(exit_with_parent())
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
