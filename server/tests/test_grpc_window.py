"""A report near the size budget still arrives whole (issue 12: the server runs gRPC without its BDP probe,
main.GRPC_OPTIONS, so a stream's receive window no longer grows: the report flows in the default one)."""

import httpx

from ctxbench_server.agents.reports_wire import MAX_SAMPLES

from .runs_helpers import PIPE, MakeAgent, agents, post


async def test_a_report_of_max_samples_is_acknowledged(
    make_agent: MakeAgent, http: httpx.AsyncClient
) -> None:
    [agent] = await agents(make_agent, 1)
    run = await post(http, {"machine_id": agent.agent_id, "items": [PIPE]})
    start = (await agent.expect("start_run")).start_run
    samples = [10.0 + (i % 97) / 10 for i in range(MAX_SAMPLES)]
    req = agent.result(run["id"], start.items[0], samples=samples)
    assert len(req.SerializeToString()) > 900_000  # ~1 MB: 15 default windows
    await agent.send(req)
    ack = await agent.expect("result_ack", 60)  # (its statistics take seconds on a busy host)
    assert ack.result_ack.result_id == req.result_report.result_id
    [stored] = (await http.get(f"/api/v1/runs/{run['id']}/results")).json()
    assert stored["n"] == MAX_SAMPLES and stored["samples"][:2] == [10.0, 10.1]
