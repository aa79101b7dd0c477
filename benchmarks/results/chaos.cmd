benchmarks/chaos.sh _build --duration 120 --seed 3  # duration 120 s, seed 3, 2 x 3, 2026-11-25T11:03:18Z
