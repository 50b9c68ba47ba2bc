# Call 5 of the seventh session: cold pipeline compiles on NVIDIA (disk cache off, fresh HOME): the quickstart twice (cache off, then on), and bench --compile-only of one alloc cell per strategy.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
L=.gpu/bin/gpu-heap-l
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 300 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
cold quickstart-cold .gpu/bin/quickstart
# warm: the same HOME twice with the cache on
h=$(mktemp -d)
for i in 1 2; do s=$(date +%s%N); HOME=$h XDG_CACHE_HOME=$h timeout 300 .gpu/bin/quickstart > $o/quickstart-cache$i.txt 2>&1; echo "quickstart-cache$i: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; done
for st in bump rw-bm tbuddy ouro-p-s ualloc ouro-c-vl; do
  cold compile-$st $L bench --strategy $st --test alloc --threads 10000 --sizes 16 --heap-size 64MiB --compile-only --json $o/compile-$st.json
done
cat $o/log.txt
