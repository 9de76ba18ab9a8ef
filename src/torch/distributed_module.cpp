// trainrt::torch::DistributedModule: DDP over a c10d process group (torch.hpp).
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "log/log.hpp"
#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {

// One bucket: parameters of one dtype whose gradients are averaged by one allreduce of `flat`.
// After the first backward each parameter's .grad() is a view into `flat` (PyTorch DDP's
// gradient_as_bucket_view): the average lands in the gradients with no copy out.
struct Bucket {
    std::vector<std::size_t> params;     // indices into Impl::params, in bucket order
    std::vector<std::int64_t> offsets;   // each one's first element in `flat`
    at::Tensor flat;
    at::Tensor scale;                    // 1 / world size, 0-dim, of flat's dtype and device
    std::size_t pending = 0;             // gradients still missing in this backward
    c10::intrusive_ptr<c10d::Work> work; // its allreduce, once launched
};

struct DistributedModule::Impl {
    std::shared_ptr<::torch::nn::Module> module;
    c10::intrusive_ptr<c10d::ProcessGroup> group;
    DistributedOptions options;
    Session* session = nullptr;  // prepare_model's
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    std::vector<std::size_t> bucket_of, slot_of;  // per parameter: its bucket, its index in it
    std::vector<at::Tensor> views;                // per parameter: its gradient's place in its bucket
    std::vector<Bucket> buckets;
    std::vector<bool> ready;
    bool in_backward = false;
    // The accumulators stay alive (a parameter only holds a weak reference) and keep our hooks.
    // The accumulator's handle type as this LibTorch returns it (a shared_ptr before torch 2.15, an
    // intrusive_ptr since): taken from the call, so one source builds against either.
    using AccumulatorRef = decltype(::torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));
    std::vector<std::pair<AccumulatorRef, std::uintptr_t>> hooks;

    void collect_parameters();
    void broadcast_state();
    void broadcast_buffers();
    void build_buckets();
    at::Tensor alias_in_bucket(std::size_t k) const;
    void install_hooks();
    void remove_hooks() noexcept;
    void on_ready(std::size_t index);
    void launch(Bucket& bucket);
    void finalize();
    void fill_unused(Bucket& bucket);
};

void DistributedModule::Impl::collect_parameters() {
    for (const auto& item : module->named_parameters()) {
        if (!item.value().requires_grad()) continue;
        names.push_back(item.key());
        params.push_back(item.value());
    }
}

// Rank 0's parameters and buffers, on every rank (DDP's start).
void DistributedModule::Impl::broadcast_state() {
    ::torch::NoGradGuard no_grad;
    std::vector<at::Tensor> tensors = module->parameters();
    for (const at::Tensor& buffer : module->buffers()) tensors.push_back(buffer);
    for (at::Tensor& tensor : tensors) {
        std::vector<at::Tensor> one{tensor};
        group->broadcast(one)->wait();
    }
}

// Rank 0's buffers on every rank, one broadcast per buffer type (DistributedOptions).
void DistributedModule::Impl::broadcast_buffers() {
    ::torch::NoGradGuard no_grad;
    std::map<at::ScalarType, std::vector<at::Tensor>> by_type;
    for (const at::Tensor& buffer : module->buffers()) by_type[buffer.scalar_type()].push_back(buffer);
    for (auto& [type, buffers] : by_type) {
        std::vector<at::Tensor> pieces;
        for (const at::Tensor& buffer : buffers) pieces.push_back(buffer.reshape({-1}));
        std::vector<at::Tensor> flat{at::cat(pieces)};
        group->broadcast(flat)->wait();
        std::int64_t offset = 0;
        for (at::Tensor& buffer : buffers) {
            buffer.copy_(flat[0].narrow(0, offset, buffer.numel()).view(buffer.sizes()));
            offset += buffer.numel();
        }
    }
}

// Parameter k's place in its bucket as a tensor of its shape that aliases the bucket's storage
// without being an autograd view: LibTorch's Optimizer::zero_grad() detaches gradients in place,
// which a view refuses.
at::Tensor DistributedModule::Impl::alias_in_bucket(std::size_t k) const {
    ::torch::NoGradGuard no_grad;
    const Bucket& bucket = buckets[bucket_of[k]];
    const at::IntArrayRef sizes = params[k].sizes();
    std::vector<std::int64_t> strides(sizes.size(), 1);
    for (std::size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<std::int64_t>(sizes[d], 1);
    at::Tensor alias = at::empty({0}, bucket.flat.options());
    alias.set_(bucket.flat.storage(), bucket.flat.storage_offset() + bucket.offsets[slot_of[k]], sizes, strides);
    return alias;
}

void DistributedModule::Impl::build_buckets() {
    const auto limit = static_cast<std::int64_t>(options.bucket_mb * 1024 * 1024);
    bucket_of.resize(params.size());
    slot_of.resize(params.size());
    std::int64_t bytes = 0, elements = 0;
    for (std::size_t k = params.size(); k-- > 0;) {
        const at::Tensor& p = params[k];
        const bool fresh = buckets.empty() || bytes >= limit ||
                           params[buckets.back().params.front()].scalar_type() != p.scalar_type();
        if (fresh) {
            if (!buckets.empty()) buckets.back().flat = at::zeros({elements}, params[buckets.back().params.front()].options());
            buckets.emplace_back();
            bytes = elements = 0;
        }
        Bucket& bucket = buckets.back();
        bucket_of[k] = buckets.size() - 1;
        slot_of[k] = bucket.params.size();
        bucket.params.push_back(k);
        bucket.offsets.push_back(elements);
        elements += p.numel();
        bytes += static_cast<std::int64_t>(p.nbytes());
    }
    if (!buckets.empty()) buckets.back().flat = at::zeros({elements}, params[buckets.back().params.front()].options());
    for (std::size_t k = 0; k < params.size(); ++k) views.push_back(alias_in_bucket(k));
    ready.assign(params.size(), false);
    for (Bucket& bucket : buckets)
        bucket.scale = at::scalar_tensor(1.0 / static_cast<double>(group->getSize()), bucket.flat.options());
}

void DistributedModule::Impl::install_hooks() {
    for (std::size_t k = 0; k < params.size(); ++k) {
        auto accumulator = ::torch::autograd::impl::grad_accumulator(params[k]);
        const std::uintptr_t key = accumulator->add_post_hook(std::make_unique<::torch::autograd::utils::LambdaPostHook>(
            [this, k](const ::torch::autograd::variable_list& outputs, const ::torch::autograd::variable_list&) {
                on_ready(k);
                return outputs;
            }));
        hooks.emplace_back(std::move(accumulator), key);
    }
}

void DistributedModule::Impl::remove_hooks() noexcept {
    for (auto& [accumulator, key] : hooks) accumulator->del_post_hook(key);
    hooks.clear();
}

// Autograd has accumulated parameter `index`'s gradient for this backward.
void DistributedModule::Impl::on_ready(std::size_t index) {
    if (!in_backward) {
        in_backward = true;
        ::torch::autograd::Engine::get_default_engine().queue_callback([this] { finalize(); });
    }
    if (ready[index]) return;
    ready[index] = true;
    Bucket& bucket = buckets[bucket_of[index]];
    // Divided by the world size on the way in, summed by the allreduce (as PyTorch's reducer): one
    // pass over the gradient, and a SUM every backend has.
    const at::Tensor& grad = params[index].grad();
    at::Tensor& view = views[index];
    if (grad.is_same(view)) view.mul_(bucket.scale);
    else at::mul_out(view, grad, bucket.scale);  // the Scalar overload would compute into a temporary
    if (--bucket.pending == 0) launch(bucket);
}

void DistributedModule::Impl::launch(Bucket& bucket) {
    std::vector<at::Tensor> tensors{bucket.flat};
    c10d::AllreduceOptions sum;
    sum.reduceOp = c10d::ReduceOp::SUM;
    bucket.work = group->allreduce(tensors, sum);
}

// A bucket some of whose parameters got no gradient: zeros for them, or the error.
void DistributedModule::Impl::fill_unused(Bucket& bucket) {
    for (std::size_t slot = 0; slot < bucket.params.size(); ++slot) {
        const std::size_t k = bucket.params[slot];
        if (ready[k]) continue;
        if (!options.find_unused_parameters)
            throw WorkloadError(fmt::format(
                "prepare_model: parameter '{}' got no gradient in this backward pass (it took no part in the "
                "loss); pass find_unused_parameters = true to average zeros for it", names[k]));
        views[k].zero_();
        ready[k] = true;
        --bucket.pending;
    }
    launch(bucket);
}

// End of backward: every bucket averaged, the results in each parameter's .grad().
void DistributedModule::Impl::finalize() {
    in_backward = false;
    for (Bucket& bucket : buckets)
        if (!bucket.work) fill_unused(bucket);
    ::torch::NoGradGuard no_grad;
    for (Bucket& bucket : buckets) {
        bucket.work->wait();
        bucket.work.reset();
        bucket.pending = bucket.params.size();
        for (const std::size_t k : bucket.params)
            if (!params[k].grad().is_same(views[k])) params[k].mutable_grad() = views[k];
    }
    std::fill(ready.begin(), ready.end(), false);
    if (session != nullptr) session->await_snapshot();  // before optimizer.step()
    if (options.broadcast_buffers) broadcast_buffers();
}

DistributedModule::DistributedModule(std::shared_ptr<::torch::nn::Module> module,
                                     c10::intrusive_ptr<c10d::ProcessGroup> group, DistributedOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->module = std::move(module);
    impl_->group = std::move(group);
    impl_->options = options;
    if (impl_->group->getSize() == 1) return;  // one rank: its gradients are the average (Ray does not wrap either)
    impl_->collect_parameters();
    impl_->broadcast_state();
    impl_->build_buckets();
    for (Bucket& bucket : impl_->buckets) bucket.pending = bucket.params.size();
    impl_->install_hooks();
}

DistributedModule::~DistributedModule() {
    if (!impl_) return;
    // The module's parameters may go with it: a background snapshot of them is taken first.
    try {
        if (impl_->session != nullptr) impl_->session->await_snapshot();
    } catch (const std::exception& error) {  // recording the save's event failed; never thrown from here
        log::warn("prepare_model: {}", error.what());
    }
    impl_->remove_hooks();
}
DistributedModule::DistributedModule(DistributedModule&&) noexcept = default;
DistributedModule& DistributedModule::operator=(DistributedModule&& other) noexcept {
    if (this != &other) {
        if (impl_) impl_->remove_hooks();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

::torch::nn::Module& DistributedModule::module() const { return *impl_->module; }
std::size_t DistributedModule::bucket_count() const { return impl_->buckets.size(); }

DistributedModule prepare_model(std::shared_ptr<::torch::nn::Module> module, Session& session,
                                bool find_unused_parameters, bool broadcast_buffers) {
    DistributedOptions options;
    options.bucket_mb = ScalingSettings::read(session.config()).bucket_mb.value;
    options.find_unused_parameters = find_unused_parameters;
    options.broadcast_buffers = broadcast_buffers;
    const at::Device on = device(session);
    module->to(on);
    if (on.is_cuda() && session.context().world_rank == 0)
        log::info("prepare_model: module on {} (LibTorch {})", on.str(), TORCH_VERSION);
    DistributedModule prepared(std::move(module), make_process_group(), options);
    prepared.impl_->session = &session;
    return prepared;
}

}  // namespace trainrt::torch
