benchmarks/chaos.sh _build --duration 150 --seed 5  # duration 150 s, seed 5, 2 x 3, 2026-11-25T12:55:01Z
