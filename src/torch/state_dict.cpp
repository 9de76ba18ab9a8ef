// trainrt::torch::StateDict and the load_* functions (torch.hpp): LibTorch state <-> checkpoints.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include <mutex>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "torch/device.hpp"
#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {
namespace {

TensorType type_of(const at::Tensor& tensor, const std::string& name) {
    switch (tensor.scalar_type()) {
        case at::kFloat: return TensorType::f32;
        case at::kDouble: return TensorType::f64;
        case at::kInt: return TensorType::i32;
        case at::kLong: return TensorType::i64;
        case at::kByte: return TensorType::u8;
        default: break;
    }
    throw WorkloadError(fmt::format("checkpoint: tensor '{}' is {}; checkpoints hold float32, float64, int32, "
                                    "int64 and uint8 tensors", name, c10::toString(tensor.scalar_type())));
}

Shape shape_of(const at::Tensor& tensor) {
    Shape shape;
    for (std::int64_t extent : tensor.sizes()) shape.push_back(static_cast<std::uint64_t>(extent));
    if (shape.empty()) shape.push_back(1);  // a scalar is stored as one element
    return shape;
}

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The stored tensor `name` into `target` (same shape and type, or a CheckpointError).
void read_into(const Checkpoint& checkpoint, const std::string& name, at::Tensor& target) {
    if (!checkpoint.has_tensor(name))
        throw CheckpointError(fmt::format("checkpoint {}: no tensor '{}': it was written by another model",
                                          checkpoint.path(), name));
    const Shape stored = checkpoint.global_shape(name), wanted = shape_of(target);
    const TensorType type = type_of(target, name);
    if (stored != wanted || checkpoint.tensor_type(name) != type)
        throw CheckpointError(fmt::format("checkpoint {}: tensor '{}' is {} {}, the model's is {} {}; it was "
                                          "written by another model", checkpoint.path(), name,
                                          tensor_type_name(checkpoint.tensor_type(name)), shape_text(stored),
                                          tensor_type_name(type), shape_text(wanted)));
    ::torch::NoGradGuard no_grad;
    at::Tensor buffer = at::empty(target.sizes(), target.options().device(at::kCPU)).contiguous();
    checkpoint.read(name, type, Shape(stored.size(), 0), stored, buffer.data_ptr());
    target.copy_(buffer);
}

// LibTorch keys an optimizer's per-parameter state by the parameter's TensorImpl: its address as
// text in 1.x, the pointer itself in 2.x.
using StateKey = std::decay_t<decltype(std::declval<::torch::optim::Optimizer&>().state())>::key_type;

template <typename Key = StateKey>  // a template, so that the other version's branch is discarded
Key state_key(const at::Tensor& param) {
    if constexpr (std::is_same_v<Key, std::string>) return c10::str(param.unsafeGetTensorImpl());
    else return param.unsafeGetTensorImpl();
}

std::string param_prefix(const std::string& prefix, std::size_t group, std::size_t index) {
    return fmt::format("{}g{}.p{}.", prefix, group, index);
}

// The per-parameter state fields of a supported optimizer, by name (tensors are live references).
struct Fields {
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    std::int64_t* step = nullptr;
};

template <class State>
Fields adam_fields(State& state) {
    Fields fields;
    fields.tensors = {{"exp_avg", state.exp_avg()}, {"exp_avg_sq", state.exp_avg_sq()}};
    if (state.max_exp_avg_sq().defined()) fields.tensors.emplace_back("max_exp_avg_sq", state.max_exp_avg_sq());
    fields.step = &state.step();
    return fields;
}

Fields fields_of(::torch::optim::OptimizerParamState& state) {
    if (auto* sgd = dynamic_cast<::torch::optim::SGDParamState*>(&state)) {
        Fields fields;
        if (sgd->momentum_buffer().defined()) fields.tensors = {{"momentum_buffer", sgd->momentum_buffer()}};
        return fields;
    }
    if (auto* adam = dynamic_cast<::torch::optim::AdamParamState*>(&state)) return adam_fields(*adam);
    if (auto* adamw = dynamic_cast<::torch::optim::AdamWParamState*>(&state)) return adam_fields(*adamw);
    throw WorkloadError("checkpoint: this optimizer's state cannot be checkpointed yet (SGD, Adam and AdamW can)");
}

// A fresh state object of `optimizer`'s kind for a parameter that has none yet.
std::unique_ptr<::torch::optim::OptimizerParamState> fresh_state(::torch::optim::Optimizer& optimizer) {
    if (dynamic_cast<::torch::optim::SGD*>(&optimizer)) return std::make_unique<::torch::optim::SGDParamState>();
    if (dynamic_cast<::torch::optim::Adam*>(&optimizer)) return std::make_unique<::torch::optim::AdamParamState>();
    if (dynamic_cast<::torch::optim::AdamW*>(&optimizer)) return std::make_unique<::torch::optim::AdamWParamState>();
    throw WorkloadError("checkpoint: this optimizer's state cannot be restored yet (SGD, Adam and AdamW can)");
}

}  // namespace

StateDict::~StateDict() {
    if (kept_.empty()) return;  // a moved-from dict: the holder keeps the last one with tensors
    static std::mutex mutex;
    static std::vector<at::Tensor> held;
    std::vector<at::Tensor> released;
    {
        std::lock_guard<std::mutex> lock(mutex);
        released = std::exchange(held, std::move(kept_));
    }
}

// A CPU, contiguous copy of `tensor` (a scalar as one element) that lives as long as the dict.
const at::Tensor& StateDict::keep(const at::Tensor& tensor, const std::string& name) {
    at::Tensor kept = tensor.detach().to(at::kCPU).contiguous();
    if (kept.dim() == 0) kept = kept.reshape({1});
    type_of(kept, name);  // a type checkpoints hold, or the error naming it
    kept_.push_back(kept);
    return kept_.back();
}

namespace {

// `kept` as row context.world_rank of a [world size, ...] tensor.
template <class T>
void add_row(CheckpointState& state, const std::string& name, const at::Tensor& kept, const Context& context) {
    Shape row = shape_of(kept), global = row, offset(row.size() + 1, 0);
    global.insert(global.begin(), static_cast<std::uint64_t>(context.world_size));
    offset[0] = static_cast<std::uint64_t>(context.world_rank);
    row.insert(row.begin(), 1);
    state.sharded<T>(name, {kept.data_ptr<T>(), std::size_t(kept.numel())}, global, offset, row);
}

}  // namespace

StateDict& StateDict::per_rank(const Context& context, const std::string& name, const at::Tensor& tensor) {
    const at::Tensor& kept = keep(tensor, name);
    switch (type_of(kept, name)) {
        case TensorType::f32: add_row<float>(state_, name, kept, context); break;
        case TensorType::f64: add_row<double>(state_, name, kept, context); break;
        case TensorType::i32: add_row<std::int32_t>(state_, name, kept, context); break;
        case TensorType::i64: add_row<std::int64_t>(state_, name, kept, context); break;
        case TensorType::u8: add_row<std::uint8_t>(state_, name, kept, context); break;
    }
    return *this;
}

void StateDict::add(const std::string& name, const at::Tensor& tensor) {
    const at::Tensor& kept = keep(tensor, name);
    switch (type_of(kept, name)) {
        case TensorType::f32: state_.replicated<float>(name, {kept.data_ptr<float>(), std::size_t(kept.numel())}, shape_of(kept)); break;
        case TensorType::f64: state_.replicated<double>(name, {kept.data_ptr<double>(), std::size_t(kept.numel())}, shape_of(kept)); break;
        case TensorType::i32: state_.replicated<std::int32_t>(name, {kept.data_ptr<std::int32_t>(), std::size_t(kept.numel())}, shape_of(kept)); break;
        case TensorType::i64: state_.replicated<std::int64_t>(name, {kept.data_ptr<std::int64_t>(), std::size_t(kept.numel())}, shape_of(kept)); break;
        case TensorType::u8: state_.replicated<std::uint8_t>(name, {kept.data_ptr<std::uint8_t>(), std::size_t(kept.numel())}, shape_of(kept)); break;
    }
}

StateDict& StateDict::module(const ::torch::nn::Module& module, const std::string& prefix) {
    for (const auto& item : module.named_parameters()) add(prefix + item.key(), item.value());
    for (const auto& item : module.named_buffers()) add(prefix + item.key(), item.value());
    return *this;
}

StateDict& StateDict::optimizer(::torch::optim::Optimizer& optimizer, const std::string& prefix) {
    for (std::size_t g = 0; g < optimizer.param_groups().size(); ++g) {
        auto& group = optimizer.param_groups()[g];
        state_.attribute(fmt::format("{}g{}.lr", prefix, g), group.options().get_lr());
        for (std::size_t i = 0; i < group.params().size(); ++i) {
            auto found = optimizer.state().find(state_key(group.params()[i]));
            if (found == optimizer.state().end()) continue;  // no step taken for it yet
            Fields fields = fields_of(*found->second);
            for (const auto& [field, tensor] : fields.tensors) add(param_prefix(prefix, g, i) + field, tensor);
            if (fields.step != nullptr) state_.attribute(param_prefix(prefix, g, i) + "step", *fields.step);
        }
    }
    return *this;
}

namespace {

// Where rng(context, name) puts the GPU's generator: "rng.cpu" -> "rng.cuda", else name + ".cuda".
std::string cuda_name(const std::string& name) {
    const std::string cpu = ".cpu";
    const bool ends_cpu = name.size() >= cpu.size() && name.compare(name.size() - cpu.size(), cpu.size(), cpu) == 0;
    return (ends_cpu ? name.substr(0, name.size() - cpu.size()) : name) + ".cuda";
}

}  // namespace

StateDict& StateDict::rng(const Context& context, const std::string& name) {
    // The GPU's state first: a LibTorch without CUDA refuses before anything is added.
    const at::Tensor gpu = context.gpu_device >= 0 ? cuda_generator(context).get_state() : at::Tensor();
    per_rank(context, name, at::detail::getDefaultCPUGenerator().get_state());
    if (gpu.defined()) per_rank(context, cuda_name(name), gpu);
    return *this;
}

StateDict& StateDict::rng(const std::string& name) {
    add(name, at::detail::getDefaultCPUGenerator().get_state());
    return *this;
}

StateDict& StateDict::attribute(const std::string& name, AttributeValue value) {
    state_.attribute(name, std::move(value));
    return *this;
}

StateDict& StateDict::stream_position(const Dataset& dataset, const DataPosition& position, const BatchOptions& options) {
    save_position(state_, dataset, position, options);
    return *this;
}

void load_module(const Checkpoint& checkpoint, ::torch::nn::Module& module, const std::string& prefix) {
    for (auto& item : module.named_parameters()) read_into(checkpoint, prefix + item.key(), item.value());
    for (auto& item : module.named_buffers()) read_into(checkpoint, prefix + item.key(), item.value());
}

void load_optimizer(const Checkpoint& checkpoint, ::torch::optim::Optimizer& optimizer, const std::string& prefix) {
    for (std::size_t g = 0; g < optimizer.param_groups().size(); ++g) {
        auto& group = optimizer.param_groups()[g];
        const std::string lr = fmt::format("{}g{}.lr", prefix, g);
        if (checkpoint.has_attribute(lr)) group.options().set_lr(checkpoint.attribute_double(lr));
        for (std::size_t i = 0; i < group.params().size(); ++i) {
            const at::Tensor& param = group.params()[i];
            const std::string at_param = param_prefix(prefix, g, i);
            const bool saved = checkpoint.has_attribute(at_param + "step") ||
                               checkpoint.has_tensor(at_param + "momentum_buffer") || checkpoint.has_tensor(at_param + "exp_avg");
            if (!saved) continue;
            auto& slot = optimizer.state()[state_key(param)];
            if (!slot) slot = fresh_state(optimizer);
            if (auto* sgd = dynamic_cast<::torch::optim::SGDParamState*>(slot.get())) sgd->momentum_buffer(at::zeros_like(param));
            if (auto* adam = dynamic_cast<::torch::optim::AdamParamState*>(slot.get()))
                adam->exp_avg(at::zeros_like(param)).exp_avg_sq(at::zeros_like(param));
            if (auto* adamw = dynamic_cast<::torch::optim::AdamWParamState*>(slot.get()))
                adamw->exp_avg(at::zeros_like(param)).exp_avg_sq(at::zeros_like(param));
            Fields fields = fields_of(*slot);
            for (auto& [field, tensor] : fields.tensors) read_into(checkpoint, at_param + field, tensor);
            if (fields.step != nullptr) *fields.step = checkpoint.attribute_int(at_param + "step");
        }
    }
}

bool load_per_rank(const Checkpoint& checkpoint, const Context& context, const std::string& name, at::Tensor& target) {
    if (checkpoint.world_size() != context.world_size) return false;
    Shape row = shape_of(target), global = row, offset(row.size() + 1, 0);
    global.insert(global.begin(), static_cast<std::uint64_t>(context.world_size));
    offset[0] = static_cast<std::uint64_t>(context.world_rank);
    row.insert(row.begin(), 1);
    const TensorType type = type_of(target, name);
    if (!checkpoint.has_tensor(name) || checkpoint.global_shape(name) != global || checkpoint.tensor_type(name) != type)
        throw CheckpointError(fmt::format("checkpoint {}: no per-rank tensor '{}' of {} {}: it was written by another "
                                          "program", checkpoint.path(), name, tensor_type_name(type), shape_text(global)));
    ::torch::NoGradGuard no_grad;
    at::Tensor buffer = at::empty(target.sizes(), target.options().device(at::kCPU)).contiguous();
    checkpoint.read(name, type, offset, row, buffer.data_ptr());
    target.copy_(buffer);
    return true;
}

namespace {

void set_generator(at::Generator generator, const at::Tensor& state) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

// `generator` from its entry `name`: this rank's row of a per-rank one (row rank mod the old world
// size after a change of world size), or the one state every rank got.
void load_generator(const Checkpoint& checkpoint, const Context& context, const std::string& name,
                    at::Generator generator) {
    at::Tensor state = generator.get_state();
    if (checkpoint.has_tensor(name) && checkpoint.global_shape(name).size() == 2) {
        Context saved = context;
        saved.world_size = checkpoint.world_size();
        saved.world_rank = context.world_rank % saved.world_size;
        load_per_rank(checkpoint, saved, name, state);
    } else {
        read_into(checkpoint, name, state);
    }
    set_generator(generator, state);
}

}  // namespace

void load_rng(const Checkpoint& checkpoint, const Context& context, const std::string& name) {
    load_generator(checkpoint, context, name, at::detail::getDefaultCPUGenerator());
    if (context.gpu_device >= 0 && checkpoint.has_tensor(cuda_name(name)))
        load_generator(checkpoint, context, cuda_name(name), cuda_generator(context));
}

void load_rng(const Checkpoint& checkpoint, const std::string& name) {
    at::Tensor state = at::detail::getDefaultCPUGenerator().get_state();
    read_into(checkpoint, name, state);
    set_generator(at::detail::getDefaultCPUGenerator(), state);
}

}  // namespace trainrt::torch
