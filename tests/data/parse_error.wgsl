// A user shader whose helper, included from disk, has a syntax error.
#include "alloc.wgsl"
#include "helpers/broken_syntax.wgsl"

@compute @workgroup_size(1)
fn main() {
    _ = malloc(16u);
}
