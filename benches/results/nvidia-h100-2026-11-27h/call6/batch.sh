# Call 6: tbuddy frees with a look before each summary atomic (DIAG_LOOK in diagnostic build d2) against the same build without, alternating.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
D=.gpu/bin/gpu-heap-d
T="--threads 100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1"
i=0
for v in base DIAG_LOOK base DIAG_LOOK base DIAG_LOOK; do
  i=$((i+1)); export GPU_HEAP_DIAG=$(echo $v | sed "s/^base.*//"); run d$i-$v 60 $D bench --strategy bump,tbuddy --test alloc $T --json $o/d$i-$v.json
done
cat $o/log.txt
