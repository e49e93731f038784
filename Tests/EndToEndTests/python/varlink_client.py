#!/usr/bin/env python3
"""Calls stratad's interfaces with the `varlink` PyPI client, as an outside program would.

usage: varlink_client.py ADMIN_SOCKET DATA_SOCKET
Prints "OK <n> checks" on success; exits 1 with a message on the first failure.
"""
import sys
import varlink

admin_address, data_address = (f"unix:{p}" for p in sys.argv[1:3])
checks = 0


def check(condition, message):
    global checks
    if not condition:
        print(f"FAILED: {message}")
        sys.exit(1)
    checks += 1


with varlink.Client(address=admin_address) as client:
    with client.open("org.varlink.service") as service:
        info = service.GetInfo()
        check(info["product"] == "stratad", f"GetInfo product: {info}")
        check("io.strata.Admin" in info["interfaces"], f"interfaces: {info['interfaces']}")
        description = service.GetInterfaceDescription("io.strata.Store")["description"]
        check("method Fetch(" in description, "Store description")
    with client.open("io.strata.Admin") as admin:
        status = admin.Status()
        check(status["status"].endswith("ready"), f"status: {status['status']}")
        check(status["stores"][0]["name"] == "aircraft", f"stores: {status['stores']}")
        # States and kinds travel as plain strings (Varlink enums in the interface description).
        check(status["stores"][0]["state"] == "ready", f"store state: {status['stores']}")
        check(admin.ListStores()["stores"][0]["state"] == "ready", "ListStores state")
        check(status["scheduler"]["state"] in ("idle", "waiting", "running", "paused", "disabled"), f"scheduler: {status['scheduler']}")
        for task in admin.Pending("aircraft")["stores"][0]["tasks"]:
            check(task["state"] in ("pending", "running", "done") and isinstance(task["kind"], str), f"task: {task}")
        check(admin.SetSetting("idle_after", "45s")["previous"] == "1s", "SetSetting previous")
        check(admin.GetSettings("idle_after")["settings"][0]["value"] == "45s", "GetSettings")
        check(admin.Pause("python")["scheduler"]["paused"] is True, "Pause")
        check(admin.FinishDeferred("aircraft", True, False)["state"] == "skipped", "FinishDeferred respects pause")
        check(admin.Resume()["scheduler"]["paused"] is False, "Resume")
        replies = list(admin.FinishDeferred("aircraft", True, True, _more=True))
        check(replies[-1]["state"] == "finished", f"FinishDeferred: {replies}")
        metrics = admin.Metrics()["text"]
        check("# TYPE strata_requests_total counter" in metrics and 'method="io.strata.Admin.Status"' in metrics, f"Metrics: {metrics[:200]}")
        try:
            admin.Checkpoint("nope")
            check(False, "Checkpoint of an unknown store succeeded")
        except varlink.VarlinkError as error:
            check(error.error() == "io.strata.Admin.NoSuchStore", f"error: {error}")

with varlink.Client(address=data_address) as client:
    with client.open("io.strata.Store") as store:
        inserted = store.Insert("aircraft", "Aircraft", {"tailNumber": "F-PYTH", "colorScheme": {"primary": "blue"}})["object"]
        check(inserted["_pk"] > 0 and inserted["colorScheme"]["primary"] == "blue", f"Insert: {inserted}")
        updated = store.Update("aircraft", "Aircraft", inserted["_pk"], {"aircraftType": "A320"})["object"]
        check(updated["aircraftType"] == "A320", f"Update: {updated}")
        found = store.Fetch("aircraft", "Aircraft", "colorScheme.primary == %@", ["blue"], ["tailNumber:desc"], 10, 0)["objects"]
        check([o["tailNumber"] for o in found] == ["F-PYTH"], f"Fetch: {found}")
        check(store.Count("aircraft", "Aircraft", None, None)["count"] == 1, "Count")
        results = store.Batch("aircraft", [
            {"op": "insert", "entity": "Aircraft", "values": {"tailNumber": "F-BAT1"}},
            {"op": "delete", "entity": "Aircraft", "id": inserted["_pk"]},
        ])["results"]
        check(results[0]["tailNumber"] == "F-BAT1", f"Batch: {results}")
        try:
            store.Batch("aircraft", [
                {"op": "insert", "entity": "Aircraft", "values": {"tailNumber": "F-NOPE"}},
                {"op": "update", "entity": "Aircraft", "id": 424242, "values": {}},
            ])
            check(False, "a failing batch succeeded")
        except varlink.VarlinkError as error:
            check(error.error() == "io.strata.Store.ObjectNotFound", f"batch error: {error}")
        check(store.Count("aircraft", "Aircraft", "tailNumber == %@", ["F-NOPE"])["count"] == 0, "batch was not rolled back")
        check(store.Delete("aircraft", "Aircraft", results[0]["_pk"])["deleted"] is True, "Delete")

print(f"OK {checks} checks")
