# Call 7 of the fifth session: the alloc and accumulate grids of all 13 strategies with bump, build e (7b8fa8d; main once merged), four processes.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-e >> $o/log.txt
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run() { name=$1; lim=$2; shift 2; s=$(date +%s); timeout $lim .gpu/bin/gpu-heap-e bench $g --strategy "$@" --json $o/$name.json > $o/$name.txt 2>&1; echo "$name: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
t1=$(date +%s)
run walks 100 bump,rw-bm,rw,corw,rw-malloc
run buddy 70 tbuddy,ualloc
run ouro-p 70 ouro-p-s,ouro-p-va,ouro-p-vl
run ouro-c 250 ouro-c-s,ouro-c-va,ouro-c-vl
echo "grid total $(( $(date +%s) - t1 )) s" >> $o/log.txt
save; cat $o/log.txt
