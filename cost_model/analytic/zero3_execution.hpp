#pragma once
// ZeRO-3 as each framework executes it: beyond the wire time of its all-gathers and reduce-scatters
// (collectives.hpp), the copies a framework makes around them and how many collectives one layer's gather and
// reduction are cut into. The closed form (time_model.cpp) and the simulator's cost table (costs_from_plan.cpp)
// both price a ZeRO-3 unit through zero3_seconds, so they agree.
//
// Every copy is a memory-bound kernel priced through the operation table's HBM entry (op_time.hpp, memory_time):
// bytes read + written. Per parameter of the gathered unit, e = bytes of the gather dtype, r = of the reduce dtype,
// N = the shard group:
//   fsdp2      PyTorch FSDP2 (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py):
//              copy-in   foreach_all_gather, on its all_gather_copy_in_stream: _get_param_all_gather_inputs casts
//                        the fp32 shard into one flat bf16 buffer (_foreach_copy_: read 4, write e), then
//                        all_gather_copy_in copies it into the all-gather input (_foreach_copy_: read e, write e):
//                        (4 + 3e) per shard element, before the all-gather on its stream: added to the gather;
//              copy-out  foreach_all_gather_copy_out, on the compute stream after waiting for the all-gather:
//                        split_with_sizes_copy from the gathered buffer into each parameter: 2e per parameter,
//                        every time the unit is unsharded (the forward and the backward of every micro-batch);
//              RS in     foreach_reduce, on the compute stream before reduce_scatter_stream waits for it:
//                        chunk_cat of the unsharded gradients into the reduce-scatter input with the widening cast
//                        (read e, write r): (e + r) per parameter, every backward;
//              after     on the reduce-scatter stream: the reduced shard added into the sharded gradient when one
//                        exists (foreach_reduce: sharded_param.grad._local_tensor += new_sharded_grad, read r, read
//                        4, write 4 per shard element; the first reduction of the iteration assigns it): added to
//                        the reduce-scatter, for R - 1 of the iteration's R reduce-scatters
//                        (grad_accumulation.hpp).
//   fsdp1      PyTorch FSDP of FlatParameters (torch/distributed/fsdp/_flat_param.py, _runtime_utils.py), one FSDP
//              unit per layer as llm-foundry wraps them:
//              copy-in   FlatParamHandle._use_low_precision_shard on the unshard stream: the fp32 shard cast into
//                        the low-precision shard (read 4, write e) per shard element: added to the gather;
//              copy-out  none: the all-gather writes the padded unsharded flat parameter, the parameters are views
//                        into it (_use_unsharded_flat_param);
//              RS        _post_backward_hook on the post-backward stream: the flat gradient cast to the reduce dtype
//                        (read e, write r) before the reduce-scatter, the shard accumulated after it for R - 1 of R
//                        reductions (_accumulate_sharded_grad: _saved_grad_shard += sharded_grad, read r, read 4,
//                        write 4): added to the reduce-scatter.
//   deepspeed  DeepSpeed ZeRO-3 (deepspeed/runtime/zero/partition_parameters.py, stage3.py):
//              copy-in   all_gather_coalesced: torch.cat of the parameters' 16-bit partitions (ds_tensor) into the
//                        flat all-gather input, on the coordinator's all-gather stream: 2e per shard element;
//              copy-out  AllGatherCoalescedHandle.wait(), on the compute stream when the module's pre-forward hook
//                        waits: torch.cat(partitions) of every rank's part into param.data: 2e per parameter,
//                        every fetch (forward and backward);
//              RS        on reduce_and_partition_stream: each gradient copied into the contiguous IPG bucket
//                        (__add_grad_to_ipg_bucket: 2e), the bucket flattened with padding for
//                        reduce_scatter_coalesced (torch.cat: 2e), the reduced partition into the fp32 gradient
//                        partition (stage3.py partition_grads: copy_ with the cast on the first micro-batch, read e,
//                        write 4; after it add_(grad_partition.to(fp32)), the cast's temporary and the add, 3 x 4
//                        more, for R - 1 of R reductions): added to the reduce-scatter.
//              collectives  the coordinator fetches module by module (a pre-forward hook per submodule) and
//                        prefetches ahead up to stage3_prefetch_bucket_size = 5e7 elements per coalesced call; a
//                        layer's gather is therefore min(weight modules, ceil(layer parameters / 5e7)) collectives
//                        (at least 1); gradients are reduce-scattered per reduce_bucket_size = 5e8 elements (the
//                        defaults of DeepSpeed's config, deepspeed/runtime/zero/config.py:
//                        DeepSpeedZeroConfig.prefetch_bucket_size 5e7, reduce_bucket_size 5e8).
//   megatron, zeropp  none here: Megatron runs no ZeRO-3; ZeroPP's (InternEvo's) gather path is not read, its
//              copies are not priced (an assumption, stated); the additions into their gradient shards are on the
//              compute stream, priced with the W action (grad_accumulation.hpp).
#include "cost_model/analytic/collectives.hpp"
#include "cost_model/analytic/grad_accumulation.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::analytic {

// What the copies cost for one unit of `params` parameters (per GPU, one tensor-parallel rank), in bytes read +
// written (see above).
struct Zero3CopyBytes {
  double gather_copy_in = 0;    // side stream, before the all-gather (part of the gather's duration)
  double copy_out = 0;          // compute stream, after every all-gather of the unit (each F and B)
  double reduce_copy_in = 0;    // compute stream, before the reduce-scatter (each B)
  double reduce_side = 0;       // side stream, around the reduce-scatter (part of its duration)
  // All-gathers one layer's gather is issued as: FSDP2 one per fully_shard module (a layer, as torchtitan wraps
  // them), DeepSpeed per fetched module as above; 0: one collective for the whole unit (as priced before).
  int collectives_per_layer = 0;
  // Gradients reduce-scattered per layer (FSDP2), in buckets of this many parameters (> 0, DeepSpeed), or the
  // unit at once (0, and per_layer false).
  bool reduce_per_layer = false;
  double reduce_bucket_params = 0;
};
// The copies for a unit of `params` parameters of layers with `layer_params` parameters each (the layer count of
// DeepSpeed's fetches), sharded over `shard` GPUs, gradients reduced as the plan reduces them (grad_reductions).
Zero3CopyBytes zero3_copy_bytes(const Plan& plan, double params, double layer_params, int shard);
// The same with the plan's framework_precision and grad_reductions already worked out (action_costs has them).
Zero3CopyBytes zero3_copy_bytes(const Plan& plan, double params, double layer_params, int shard,
                                const FrameworkPrecision& precision, const GradReductions& reductions);

// One ZeRO-3 unit (`params` parameters) on its shard group `group`, seconds:
struct Zero3Seconds {
  double gather = 0;          // all-gather(s) with their side-stream copy-in
  double reduce_scatter = 0;  // reduce-scatter(s) with their side-stream copies
  double forward_copies = 0;  // compute stream, each forward of the unit (copy-out)
  double backward_copies = 0; // compute stream, each backward of the unit (copy-out and reduce copy-in)
};
Zero3Seconds zero3_seconds(const Plan& plan, const Group& group, double params, double layer_params);
Zero3Seconds zero3_seconds(const Plan& plan, const Group& group, double params, double layer_params,
                           const FrameworkPrecision& precision, const GradReductions& reductions);

}  // namespace zeropp::analytic
