#!/usr/bin/python3
"""The reference client for the load generator's CPU benchmark.

A streaming OpenAI-compatible client written the usual Python way: asyncio
and aiohttp (Debian: python3-aiohttp), one shared session, C workers in a
closed loop, each chunk's line read from the response, its JSON decoded and
its arrival timed, as the serving benchmarks of the engines do (vLLM's
benchmarks/backend_request_func.py, async_request_openai_chat_completions).
It keeps what bakeoff's records keep: send, first-token and end times, the
largest gap between chunks, the chunk count, usage and a hash of the text.

It prints one line, the figure scripts/clientcpu.sh compares:
    cpu-us/chunk <user+system CPU µs of this process over the load / chunks>
Usage: aiohttp_client.py URL [CONCURRENCY [REQUESTS]]
"""

import asyncio
import hashlib
import json
import resource
import sys
import time

import aiohttp


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


async def one(session, url, prompt):
    payload = {
        "model": "loop",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 200,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    rec = {"send": time.time_ns(), "first": 0, "end": 0, "chunks": 0, "max_gap": 0, "tokens": 0}
    h = hashlib.sha256()
    last = 0
    async with session.post(url, json=payload, headers={"Accept": "text/event-stream"}) as resp:
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}")
        async for line in resp.content:
            line = line.strip()
            if not line:
                continue
            data = line.decode("utf-8").removeprefix("data: ")
            now = time.time_ns()
            if data == "[DONE]":
                rec["end"] = now
                break
            chunk = json.loads(data)
            if usage := chunk.get("usage"):
                rec["tokens"] = usage["completion_tokens"]
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content") or choice.get("text")
                if not text:
                    continue
                h.update(text.encode())
                rec["chunks"] += 1
                if rec["first"] == 0:
                    rec["first"] = now
                else:
                    rec["max_gap"] = max(rec["max_gap"], now - last)
                last = now
    if rec["end"] == 0:
        raise RuntimeError("stream ended without [DONE]")
    rec["hash"] = h.hexdigest()
    return rec


async def main(url, concurrency, requests):
    url = url.rstrip("/") + "/v1/chat/completions"
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        records = []
        seq = iter(range(requests))

        async def worker():
            for i in seq:
                records.append(await one(session, url, f"p{i}"))

        before = cpu_seconds()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        cpu = cpu_seconds() - before
    chunks = sum(r["chunks"] for r in records)
    if len(records) != requests or chunks == 0:
        raise SystemExit(f"{len(records)} of {requests} requests, {chunks} chunks")
    print(f"cpu-us/chunk {cpu * 1e6 / chunks:.3f} chunks {chunks}")


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(a[0], int(a[1]) if len(a) > 1 else 32, int(a[2]) if len(a) > 2 else 256))
