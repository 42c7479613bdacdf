"""A client process for the client-crash test: runs a session, answers tools, and on the
N-th tool.call prints IN_TOOL and hangs there until it is killed."""

from __future__ import annotations

import json
import sys
import time

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc


def main() -> None:
    address, session_id, agent_json, hang_at = (
        sys.argv[1],
        sys.argv[2],
        sys.argv[3],
        int(sys.argv[4]),
    )
    spec = pb.AgentSpec()
    spec.ParseFromString(bytes.fromhex(agent_json))
    with grpc.insecure_channel(address) as ch:
        stub = pb_grpc.AgentServiceStub(ch)
        req = pb.ExecuteRequest(
            session_id=session_id, input=[pb.Message(role=pb.ROLE_USER, content="go")], agent=spec
        )
        n = 0
        for resp in stub.Execute(req):
            e = resp.event
            if e.type == "tool.call":
                n += 1
                if n == hang_at:
                    print("IN_TOOL", e.tool_call.call.id, flush=True)
                    time.sleep(3600)  # the crash under test: hang mid-tool until killed
                stub.SubmitToolResult(
                    pb.SubmitToolResultRequest(
                        session_id=session_id,
                        tool_call_id=e.tool_call.call.id,
                        result_json=json.dumps(n),
                    )
                )
                print("ANSWERED", e.tool_call.call.id, flush=True)


if __name__ == "__main__":
    main()
