benchmarks/crash-torture.sh /tmp/torture-bin --cycles 200 --seed 31001  # 2026-11-28, build 6a0ca18 (before the iraid fix), stopped after 96 cycles
benchmarks/crash-torture.sh /tmp/torture-bin --cycles 400 --seed 31002  # 2026-11-28, build 4a8dceb (iraid fix), stopped after 272 cycles
benchmarks/crash-torture.sh --cycles 3 --seed 1 --fresh  # 2026-11-28T21:58:35Z, first seed 1, 2 clients, stress-ng --cpu 2
benchmarks/crash-torture.sh --cycles 1 --seed 7 --fresh  # 2026-11-28T23:07:11Z, first seed 7, 2 clients, stress-ng --cpu 2
benchmarks/crash-torture.sh --cycles 2 --seed 31003  # 2026-11-28T23:35:57Z, first seed 31003, 2 clients, stress-ng --cpu 2
benchmarks/crash-torture.sh _build --cycles 140 --seed 31004 --stress 0  # 2026-11-29T00:01:01Z, first seed 31004, 2 clients, stress-ng --cpu 0
benchmarks/crash-torture.sh _build --cycles 90 --seed 31005 --stress 0  # 2026-11-29T00:18:17Z, first seed 31005, 2 clients, stress-ng --cpu 0
benchmarks/crash-torture.sh _build --cycles 30 --seed 31501 --stress 0  # 2026-11-29T16:08:45Z, first seed 31501, 2 clients, stress-ng --cpu 0
benchmarks/crash-torture.sh --cycles 16 --seed 1601 --raid 1  # 2026-11-29T18:33:27Z, first seed 1601, 2 clients, stress-ng --cpu 2
benchmarks/crash-torture.sh --cycles 8 --seed 1602 --raid 1  # 2026-11-29T18:45:34Z, first seed 1602, 2 clients, stress-ng --cpu 2
