// trainrt::torch::make_backend / make_process_group: a c10d::Backend over trainrt's MPI communicator,
// and a c10d::ProcessGroup whose CPU and CUDA tensors go to it.
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <condition_variable>
#include <deque>
#include <vector>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "comm/collective_watch.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

namespace trainrt::torch {
namespace {

using Future = c10::ivalue::Future;

c10::intrusive_ptr<Future> tensor_list_future() {
    return c10::make_intrusive<Future>(c10::ListType::create(c10::TensorType::get()));
}

// A collective in flight: its future completes (or fails) on the communication thread. wait()
// rethrows the failure; a wait that blocks is what the collective watchdog sees.
class CollectiveWork final : public c10d::Work {
public:
    CollectiveWork(c10::intrusive_ptr<Future> future, c10d::OpType type, const char* name)
        : c10d::Work(-1, type), future_(std::move(future)), name_(name) {}
    bool isCompleted() override { return future_->completed(); }
    bool isSuccess() const override { return future_->completed() && !future_->hasError(); }
    std::exception_ptr exception() const override {
        return future_->completed() && future_->hasError() ? future_->exception_ptr() : nullptr;
    }
    std::vector<at::Tensor> result() override { return future_->value().toTensorVector(); }
    bool wait(std::chrono::milliseconds) override {
        if (!future_->completed()) {
            comm::CollectiveScope watched(name_);
            future_->wait();
        }
        if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
        return true;
    }
    c10::intrusive_ptr<Future> getFuture() override { return future_; }

private:
    c10::intrusive_ptr<Future> future_;
    const char* name_;
};

// Runs collectives in submission order on one thread (every rank submits them in the same order,
// so they match across ranks).
// Runs the process group's collectives in submission order. A finished task (with the tensors it
// captured) is not destroyed on this thread but handed back and destroyed by the next submit() or
// by the destructor, on the caller's thread: a tensor that belongs to a Python object needs the
// GIL to die, and a caller holding the GIL while it joins this thread would otherwise deadlock
// (seen: the process group destroyed from Python while the last allreduce's tensors were freed here).
class CommThread {
public:
    CommThread() : thread_([this] { serve(); }) {}
    ~CommThread() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        ready_.notify_one();
        thread_.join();
        finished_.clear();
    }
    void submit(std::function<void()> task) {
        std::vector<std::function<void()>> done;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tasks_.push_back(std::move(task));
            done.swap(finished_);
        }
        ready_.notify_one();
    }

private:
    void serve() {
        for (;;) {
            std::function<void()> task;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
                if (tasks_.empty()) return;  // stopping, and nothing left to run
                task = std::move(tasks_.front());
                tasks_.pop_front();
            }
            task();
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.push_back(std::move(task));
        }
    }
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_;
    std::vector<std::function<void()>> finished_;  // run, to be destroyed on a caller's thread
    bool stopping_ = false;
    std::thread thread_;
};

DType dtype_of_tensor(const at::Tensor& tensor) {
    switch (tensor.scalar_type()) {
        case at::kFloat: return DType::f32;
        case at::kDouble: return DType::f64;
        case at::kLong: return DType::i64;
        case at::kInt: return DType::i32;  // DDP's unused-parameter map (find_unused_parameters)
        case at::kByte: return DType::u8;  // DeepSpeed's checkpoint-tag agreement (max/min of a hash)
        default: break;
    }
    throw CommError(fmt::format("torch process group: allreduce of {} tensors is not supported (float32, "
                                "float64, int64, int32 or uint8)", c10::toString(tensor.scalar_type())));
}

ReduceOp op_of(const c10d::ReduceOp& op) {
    switch (op.op_) {
        case c10d::ReduceOp::SUM: return ReduceOp::sum;
        case c10d::ReduceOp::AVG: return ReduceOp::mean;
        case c10d::ReduceOp::MAX: return ReduceOp::max;
        case c10d::ReduceOp::MIN: return ReduceOp::min;
        default: break;
    }
    throw CommError("torch process group: only SUM, AVG, MAX and MIN reductions are supported");
}

// CPU tensors are reduced in place, CUDA tensors through a host copy (on_host).
void check_device(const std::vector<at::Tensor>& tensors, const char* what) {
    for (const at::Tensor& tensor : tensors)
        if (!tensor.device().is_cpu() && !tensor.device().is_cuda())
            throw CommError(fmt::format("torch process group: {} of a {} tensor: this process group "
                                        "reduces CPU and CUDA tensors", what, tensor.device().str()));
}

// `tensor` as contiguous host memory: itself when it is, else a copy. A CUDA tensor's copy is
// ordered after the work on the device's default stream (where backward wrote the gradients) and
// returns once the bytes are on the host.
at::Tensor host_contiguous(const at::Tensor& tensor) {
    return tensor.is_cpu() && tensor.is_contiguous() ? tensor : tensor.to(at::kCPU).contiguous();
}

// Runs `body` on each tensor as contiguous host memory; copied back into the tensor when that
// was a copy.
void on_host(std::vector<at::Tensor>& tensors, const std::function<void(at::Tensor&)>& body) {
    for (at::Tensor& tensor : tensors) {
        at::Tensor work = host_contiguous(tensor);
        body(work);
        if (!work.is_same(tensor)) tensor.copy_(work);
    }
}

class TrainrtBackend final : public c10d::Backend {
public:
    explicit TrainrtBackend(std::unique_ptr<Communicator> comm, bool threaded)
        : c10d::Backend(comm->rank(), comm->size()), comm_(std::move(comm)) {
        if (threaded) thread_ = std::make_unique<CommThread>();
    }
    const std::string getBackendName() const override { return "trainrt"; }

    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                             const c10d::AllreduceOptions& opts) override {
        check_device(tensors, "allreduce");
        const ReduceOp op = op_of(opts.reduceOp);
        for (const at::Tensor& tensor : tensors) dtype_of_tensor(tensor);  // refused before anything starts
        return run(tensors, c10d::OpType::ALLREDUCE, "torch allreduce", [this, op](std::vector<at::Tensor>& t) {
            on_host(t, [&](at::Tensor& x) {
                comm_->allreduce(x.data_ptr(), static_cast<std::size_t>(x.numel()), dtype_of_tensor(x), op);
            });
        });
    }
    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                             const c10d::BroadcastOptions& opts) override {
        check_device(tensors, "broadcast");
        const int root = static_cast<int>(opts.rootRank);
        return run(tensors, c10d::OpType::BROADCAST, "torch broadcast", [this, root](std::vector<at::Tensor>& t) {
            on_host(t, [&](at::Tensor& x) { comm_->broadcast(x.data_ptr(), x.nbytes(), root); });
        });
    }
    c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                             std::vector<at::Tensor>& inputs,
                                             const c10d::AllgatherOptions&) override;
    // torch.distributed.all_gather_into_tensor (DeepSpeed's ZeRO, FSDP2): `output` holds every
    // rank's `input` in rank order. The name every torch 2.x has (newer ones also route their
    // all_gather_single to it), so that the component builds against a user's older torch.
    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                   const c10d::AllgatherOptions&) override;
    // torch.distributed.reduce_scatter_tensor: rank r's `output` is slice r of the reduction of
    // every rank's `input`. Reduced whole, then sliced: twice MPI_Reduce_scatter's traffic, the
    // reduction of trainrt's communicator (deterministic, the same on every rank). Named as above.
    c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                        const c10d::ReduceScatterOptions& opts) override;
    // gather (torch.distributed.gather, gather_object: torch.distributed.checkpoint's plan) and
    // scatter (scatter_object_list): through allgather and broadcast of the equal-sized parts, so
    // every rank moves all of them; correct for any root, made for small metadata.
    c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                          std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
    c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                           std::vector<std::vector<at::Tensor>>& inputs,
                                           const c10d::ScatterOptions& opts) override;
    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
        std::vector<at::Tensor> none;
        return run(none, c10d::OpType::BARRIER, "torch barrier", [this](std::vector<at::Tensor>&) { comm_->barrier(); });
    }

private:
    using Body = std::function<void(std::vector<at::Tensor>&)>;
    c10::intrusive_ptr<c10d::Work> run(std::vector<at::Tensor>& tensors, c10d::OpType type, const char* name, Body body);
    void gather_into(std::vector<at::Tensor>& outputs, const at::Tensor& input);

    std::unique_ptr<Communicator> comm_;
    std::unique_ptr<CommThread> thread_;  // null: collectives run on the caller's thread
};

// Runs `body` on the communication thread (or here) and returns its Work.
c10::intrusive_ptr<c10d::Work> TrainrtBackend::run(std::vector<at::Tensor>& tensors, c10d::OpType type,
                                                       const char* name, Body body) {
    auto future = tensor_list_future();
    auto task = [future, tensors, body = std::move(body)]() mutable {
        try {
            body(tensors);
            future->markCompleted(c10::IValue(tensors));
        } catch (...) {
            future->setError(std::current_exception());
        }
    };
    if (thread_) thread_->submit(std::move(task));
    else task();
    return c10::make_intrusive<CollectiveWork>(future, type, name);
}

void TrainrtBackend::gather_into(std::vector<at::Tensor>& outputs, const at::Tensor& input) {
    const at::Tensor mine = host_contiguous(input);
    const std::size_t bytes = mine.nbytes();
    if (outputs.size() != static_cast<std::size_t>(getSize()))
        throw CommError(fmt::format("torch process group: allgather needs {} output tensors, got {}", getSize(),
                                    outputs.size()));
    at::Tensor all = at::empty({static_cast<std::int64_t>(bytes) * getSize()}, at::kByte);
    comm_->allgather(mine.data_ptr(), all.data_ptr(), bytes);
    for (int r = 0; r < getSize(); ++r)
        outputs[static_cast<std::size_t>(r)].copy_(
            all.narrow(0, static_cast<std::int64_t>(bytes) * r, static_cast<std::int64_t>(bytes))
                .view(mine.scalar_type()).view(mine.sizes()));
}

c10::intrusive_ptr<c10d::Work> TrainrtBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
    check_device(inputs, "allgather");
    if (inputs.size() != 1 || outputs.size() != 1)
        throw CommError("torch process group: allgather takes one input tensor and one list of outputs");
    std::vector<at::Tensor> results = outputs[0];
    return run(inputs, c10d::OpType::ALLGATHER, "torch allgather", [this, results](std::vector<at::Tensor>& in) mutable {
        gather_into(results, in[0]);
    });
}

// Whether two contiguous tensors share bytes (ZeRO gathers into a buffer its own part is a view of).
bool overlaps(const at::Tensor& a, const at::Tensor& b) {
    const auto* a0 = static_cast<const char*>(a.data_ptr());
    const auto* b0 = static_cast<const char*>(b.data_ptr());
    return a.nbytes() > 0 && b.nbytes() > 0 && a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

// `output` has `world` times `input`'s elements, of its type.
void check_flat_pair(const at::Tensor& output, const at::Tensor& input, int world, const char* what) {
    check_device({output, input}, what);
    if (output.scalar_type() != input.scalar_type() || output.numel() != input.numel() * world)
        throw CommError(fmt::format("torch process group: {} needs an output of {} x {} {} elements, got {} {}",
                                    what, world, input.numel(), c10::toString(input.scalar_type()),
                                    output.numel(), c10::toString(output.scalar_type())));
}

c10::intrusive_ptr<c10d::Work> TrainrtBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                               const c10d::AllgatherOptions&) {
    check_flat_pair(output, input, getSize(), "all_gather_into_tensor");
    std::vector<at::Tensor> tensors{output, input};
    return run(tensors, c10d::OpType::_ALLGATHER_BASE, "torch all_gather_into_tensor",
               [this](std::vector<at::Tensor>& t) {
                   std::vector<at::Tensor> out{t[0]};
                   on_host(out, [&](at::Tensor& all) {
                       at::Tensor mine = host_contiguous(t[1]);
                       if (overlaps(mine, all)) mine = mine.clone();  // MPI refuses aliased buffers
                       comm_->allgather(mine.data_ptr(), all.data_ptr(), mine.nbytes());
                   });
               });
}

c10::intrusive_ptr<c10d::Work> TrainrtBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::ReduceScatterOptions& opts) {
    check_flat_pair(input, output, getSize(), "reduce_scatter_tensor");
    const ReduceOp op = op_of(opts.reduceOp);
    dtype_of_tensor(input);  // refused before anything starts
    std::vector<at::Tensor> tensors{output, input};
    return run(tensors, c10d::OpType::_REDUCE_SCATTER_BASE, "torch reduce_scatter_tensor",
               [this, op](std::vector<at::Tensor>& t) {
                   at::Tensor whole = t[1].to(at::kCPU).contiguous().clone();
                   comm_->allreduce(whole.data_ptr(), static_cast<std::size_t>(whole.numel()), dtype_of_tensor(whole), op);
                   const std::int64_t part = t[0].numel();
                   t[0].copy_(whole.view(-1).narrow(0, part * getRank(), part).view(t[0].sizes()));
               });
}

c10::intrusive_ptr<c10d::Work> TrainrtBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
    check_device(inputs, "gather");
    const bool root = getRank() == static_cast<int>(opts.rootRank);
    if (inputs.size() != 1 || (root && (outputs.size() != 1 || outputs[0].size() != static_cast<std::size_t>(getSize()))))
        throw CommError(fmt::format("torch process group: gather takes one input tensor and, on the root, one list of "
                                    "{} outputs", getSize()));
    std::vector<at::Tensor> results = root ? outputs[0] : std::vector<at::Tensor>{};
    return run(inputs, c10d::OpType::GATHER, "torch gather", [this, root, results](std::vector<at::Tensor>& in) mutable {
        std::vector<at::Tensor> everyone;  // every rank takes part in the allgather; the root keeps it
        for (int r = 0; r < getSize(); ++r) everyone.push_back(root ? results[static_cast<std::size_t>(r)] : at::empty_like(in[0]));
        gather_into(everyone, in[0]);
    });
}

c10::intrusive_ptr<c10d::Work> TrainrtBackend::scatter(std::vector<at::Tensor>& outputs,
                                                       std::vector<std::vector<at::Tensor>>& inputs,
                                                       const c10d::ScatterOptions& opts) {
    check_device(outputs, "scatter");
    const int root = static_cast<int>(opts.rootRank);
    if (outputs.size() != 1 || (getRank() == root && (inputs.size() != 1 || inputs[0].size() != static_cast<std::size_t>(getSize()))))
        throw CommError(fmt::format("torch process group: scatter takes one output tensor and, on the root, one list of "
                                    "{} inputs", getSize()));
    std::vector<at::Tensor> parts = getRank() == root ? inputs[0] : std::vector<at::Tensor>{};
    return run(outputs, c10d::OpType::SCATTER, "torch scatter", [this, root, parts](std::vector<at::Tensor>& out) {
        const std::int64_t bytes = static_cast<std::int64_t>(out[0].nbytes());
        at::Tensor all = at::empty({bytes * getSize()}, at::kByte);
        for (std::size_t r = 0; r < parts.size(); ++r)
            all.narrow(0, bytes * static_cast<std::int64_t>(r), bytes).copy_(host_contiguous(parts[r]).reshape(-1).view(at::kByte));
        comm_->broadcast(all.data_ptr(), all.nbytes(), root);
        out[0].copy_(all.narrow(0, bytes * getRank(), bytes).view(out[0].scalar_type()).view(out[0].sizes()));
    });
}

}  // namespace

c10::intrusive_ptr<c10d::Backend> make_backend() {
    // On the caller's thread the communicator itself reports to the watchdog; on the helper
    // thread the waiting caller does (CollectiveWork::wait).
    const bool threaded = comm::threads_supported();
    return c10::make_intrusive<TrainrtBackend>(
        threaded ? comm::make_helper_communicator() : comm::make_world_communicator(), threaded);
}

// A process group over one TrainrtBackend, named by it ("trainrt", not the "custom" of its type).
class TrainrtGroup final : public c10d::ProcessGroup {
public:
    using c10d::ProcessGroup::ProcessGroup;
    const std::string getBackendName() const override { return "trainrt"; }
};

c10::intrusive_ptr<c10d::ProcessGroup> make_process_group() {
    const auto backend = make_backend();
    auto group = c10::make_intrusive<TrainrtGroup>(backend->getRank(), backend->getSize());
    group->setDefaultBackend(c10d::ProcessGroup::BackendType::CUSTOM);
    for (const c10::DeviceType device : {c10::DeviceType::CPU, c10::DeviceType::CUDA})
        group->setBackend(device, c10d::ProcessGroup::BackendType::CUSTOM, backend);
    return group;
}

}  // namespace trainrt::torch
