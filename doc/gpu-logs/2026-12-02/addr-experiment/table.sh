#!/bin/bash
# the pointer-table layer: capture, then six runs, with the placement traced
cd "$(dirname "$0")/.."
top=$PWD
export LD_LIBRARY_PATH="$top/.gpu/lib" D4R_PLACE_TRACE=1 XDG_CACHE_HOME=/tmp/d4r-gpu-cache
D4R=$top/.gpu/bin/d4r-splice
NVCC=/usr/local/cuda/bin/nvcc
W=/tmp/tw; rm -rf $W; mkdir -p $W/tab-ptx
R=/tmp/r; rm -rf $R; mkdir -p $R
$NVCC -ptx -arch=sm_90 -o $W/tab-ptx/capture-table.ptx tests/gpu/capture-table.cu && $NVCC -o $W/capture-table tests/gpu/capture-table.c -lcuda || echo nvcc failed
setarch -R true && echo "setarch -R works"
$D4R capture --ptx-from $W/tab-ptx -o $W/tab -- $W/capture-table $W/tab-ptx/capture-table.ptx > $R/capture.txt 2>&1; echo "capture rc=$?"
grep -v place-trace $R/capture.txt | head -20
grep '"address"' $W/tab/table_scale/layer.json | head
for i in 1 2 3 4 5 6; do
	$D4R run $W/tab/table_scale --corpus $W/tab > $R/run$i.txt 2>&1; echo "run $i rc=$? $(grep -c 'oracle: matches' $R/run$i.txt) match"
	grep -E "place-trace (steer|attempt)" $R/run$i.txt | head -14
done
cd /tmp && tar czf $OUT/r.tgz r
