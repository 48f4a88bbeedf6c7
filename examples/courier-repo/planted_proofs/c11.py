"""c11 (race, INV7): two direct posts from one sender to beta in one instant; the chooser
lands the second arrival first (the only deviation from FIFO). Healthy network."""
import sys

from _rig import Deviate, Route, Run, harness_adapter


def body(r: Run, chooser: Deviate | None) -> None:
    r.hub("alpha", "beta", "gamma", "client")
    r.advance(10)
    r.post("client", "beta", route=Route.DIRECT)
    r.post("client", "beta", route=Route.DIRECT)
    if chooser is not None:
        chooser.armed = True
    r.advance(1000)


ok = True
CASES = [("bug, second arrival first", harness_adapter.bug_c11, True, True),
         ("clean, second arrival first", harness_adapter.make, True, False),
         ("bug, FIFO", harness_adapter.bug_c11, False, False)]
for label, factory, deviate, want in CASES:
    chooser = Deviate()
    r = Run(factory, chooser)
    body(r, chooser if deviate else None)
    r.finish()
    found = r.violations("INV7")
    print(f"c11 {label}: INV7 {'VIOLATED' if found else 'holds'}", *chooser.taken[:1])
    for m in found[:2]:
        print("   ", m[:300])
    ok &= bool(found) == want
print("c11:", "PROVED" if ok else "NOT PROVED")
sys.exit(0 if ok else 1)
