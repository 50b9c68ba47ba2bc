# Call 8 of the fifth session: ualloc's out-of-memory utilisation from 16 B to 64 KiB (build e, 7b8fa8d), a 32 MiB heap
# (every size; 2M mallocs of 16 B in one dispatch) and a 1 GiB heap (1 KiB-64 KiB: the attempts stay under the harness's slot limit).
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/gpu-heap-e >> $o/log.txt
s=$(date +%s); timeout 200 .gpu/bin/gpu-heap-e utilisation --strategy ualloc --heap-size 32MiB --sizes 16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536 --json $o/util-ualloc-32MiB.json > $o/util-ualloc-32MiB.txt 2>&1; echo "32MiB: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
s=$(date +%s); timeout 200 .gpu/bin/gpu-heap-e utilisation --strategy ualloc --heap-size 1GiB --sizes 1024,2048,4096,8192,16384,32768,65536 --json $o/util-ualloc-1GiB.json > $o/util-ualloc-1GiB.txt 2>&1; echo "1GiB: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
cat $o/log.txt $o/util-*.txt
