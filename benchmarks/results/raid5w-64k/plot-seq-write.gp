# gnuplot plot-seq-write.gp (in this folder): seq write rows of
# transport-before-after.csv, a = main, b = branch raid5w
set terminal png size 800,480
set output "seq-write.png"
set datafile separator ","
set title "ipvfs-ior seq write, 4 ranks, file per process (median of 2 quick runs)"
set ylabel "MiB/s"
set style data histograms
set style fill solid 0.8
set yrange [0:*]
plot "< grep '^seq,.*,write,' transport-before-after.csv" using 5:xtic(stringcolumn(2).' '.stringcolumn(4)) title "a: main", \
     "" using 6 title "b: raid5w"
