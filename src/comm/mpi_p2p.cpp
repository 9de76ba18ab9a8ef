#include "comm/mpi_p2p.hpp"

#include <algorithm>

#include "comm/mpi_check.hpp"
#include "comm/mpi_wait.hpp"

namespace trainrt::comm {
namespace {

constexpr std::size_t kMessageBytes = std::size_t{256} << 20;

void send_part(MPI_Comm comm, int to, int tag, const void* data, std::size_t bytes) {
    MPI_Request request;
    TRAINRT_MPI_CHECK(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, comm, &request));
    wait_politely(request);
}

void recv_part(MPI_Comm comm, int from, int tag, void* data, std::size_t bytes) {
    MPI_Request request;
    TRAINRT_MPI_CHECK(MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, from, tag, comm, &request));
    wait_politely(request);
}

}  // namespace

void send_bytes(MPI_Comm comm, int to, int tag, const std::vector<char>& bytes) {
    const std::uint64_t count = bytes.size();
    send_part(comm, to, tag, &count, sizeof count);
    for (std::size_t offset = 0; offset < bytes.size(); offset += kMessageBytes)
        send_part(comm, to, tag, bytes.data() + offset, std::min(kMessageBytes, bytes.size() - offset));
}

std::vector<char> recv_bytes(MPI_Comm comm, int from, int tag) {
    std::uint64_t count = 0;
    recv_part(comm, from, tag, &count, sizeof count);
    std::vector<char> bytes(count);
    for (std::size_t offset = 0; offset < bytes.size(); offset += kMessageBytes)
        recv_part(comm, from, tag, bytes.data() + offset, std::min(kMessageBytes, bytes.size() - offset));
    return bytes;
}

}  // namespace trainrt::comm
