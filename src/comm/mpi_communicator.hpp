#pragma once
// The MPI backend of trainrt::Communicator, and the owner of MPI's lifetime in a process.
#include <mpi.h>

#include <memory>

#include "trainrt/comm.hpp"

namespace trainrt::comm {

// Move-only owner of a duplicated communicator: dup in, free out. The duplicate returns errors
// (MPI_ERRORS_RETURN) instead of aborting, so TRAINRT_MPI_CHECK sees them.
class MpiComm {
public:
    explicit MpiComm(MPI_Comm parent);
    ~MpiComm();
    MpiComm(MpiComm&& other) noexcept;
    MpiComm& operator=(MpiComm&& other) noexcept;
    MpiComm(const MpiComm&) = delete;
    MpiComm& operator=(const MpiComm&) = delete;
    MPI_Comm get() const { return comm_; }

private:
    void release() noexcept;
    MPI_Comm comm_ = MPI_COMM_NULL;
};

std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm parent);
// Over every rank of the job (a duplicate of MPI_COMM_WORLD).
std::unique_ptr<Communicator> make_world_communicator();

// Over every rank of the job, for a helper thread that runs collectives on behalf of another
// thread: its blocking collectives do not register with the collective watchdog (the thread that
// waits for their result does; two threads cannot both be "the" blocked collective).
std::unique_ptr<Communicator> make_helper_communicator();

}  // namespace trainrt::comm
