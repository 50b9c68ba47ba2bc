#include "alloc.wgsl"
#include "does_not_exist.wgsl"
