// Memory for large direct reads, on huge pages where the kernel has them free
// (storage/page_buffer.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "storage/page_buffer.hpp"

using namespace trainrt::storage;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// /proc/buddyinfo as Linux writes it: free blocks of order 0 (4 KiB) to 10 (4 MiB) per zone.
const char* kBuddyinfo =
    "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
    "Node 0, zone    DMA32     32    112     96     84     59     46     29     19     19     21    731 \n"
    "Node 0, zone   Normal  35824  28248  16740   8682   3814   3275   2421   1892    530     97   2283 \n";

}  // namespace

TEST_CASE("free_huge_block_bytes: blocks of the huge page's order and above, over every zone", "[storage]") {
    const std::uint64_t expected = (1 + 21 + 97) * 2 * kMiB + (3 + 731 + 2283) * 4 * kMiB;
    CHECK(free_huge_block_bytes(kBuddyinfo, 4096, 2 * kMiB) == expected);
    CHECK(free_huge_block_bytes(kBuddyinfo, 4096, 4 * kMiB) == (3 + 731 + 2283) * 4 * kMiB);
    CHECK(free_huge_block_bytes("", 4096, 2 * kMiB) == 0);
    CHECK(free_huge_block_bytes("not buddyinfo at all\n", 4096, 2 * kMiB) == 0);
}

TEST_CASE("wants_huge_pages: at least 4 MiB, and free huge blocks covering twice the buffer", "[storage]") {
    CHECK(wants_huge_pages(1024 * kMiB, 2048 * kMiB));
    CHECK_FALSE(wants_huge_pages(1024 * kMiB, 2047 * kMiB));  // would make the kernel compact memory
    CHECK_FALSE(wants_huge_pages(2 * kMiB, 1024 * kMiB));     // too small to gain from them
    CHECK(wants_huge_pages(4 * kMiB, 8 * kMiB));
}

TEST_CASE("allocate_page_buffer: aligned to the huge page size, rounded up to it, writable", "[storage]") {
    std::uint64_t huge = 0;
    std::ifstream("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size") >> huge;
    if (huge == 0) huge = 2 * kMiB;
    PageBuffer buffer = allocate_page_buffer(5 * kMiB + 3, "test buffer");
    REQUIRE(buffer.data() != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(buffer.data()) % huge == 0);
    CHECK(buffer.size() % huge == 0);
    CHECK(buffer.size() >= 5 * kMiB + 3);
    std::memset(buffer.data(), 0x5A, buffer.size());
    CHECK(buffer.data()[buffer.size() - 1] == 0x5A);
    PageBuffer moved = std::move(buffer);
    CHECK(buffer.data() == nullptr);
    CHECK(moved.data()[0] == 0x5A);
}

TEST_CASE("allocate_page_buffer: a buffer that asks for huge pages gets them where the kernel gives them", "[storage]") {
    std::string enabled;
    std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), enabled);
    PageBuffer buffer = allocate_page_buffer(64 * kMiB, "test buffer");
    if (!buffer.huge() || enabled.find("[never]") != std::string::npos) {
        WARN("huge pages not asked for here (none free, or THP off): nothing to check");
        return;
    }
    std::memset(buffer.data(), 1, buffer.size());
    // AnonHugePages of the mapping in /proc/self/smaps: the kernel backed part of it by huge pages.
    std::ifstream smaps("/proc/self/smaps");
    std::ostringstream start;
    start << std::hex << reinterpret_cast<std::uintptr_t>(buffer.data()) << "-";
    std::uint64_t huge_kib = 0;
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        if (line.find('-') != std::string::npos && line.find(' ') > line.find('-') && std::isxdigit(line[0]))
            inside = line.rfind(start.str(), 0) == 0;
        if (inside && line.rfind("AnonHugePages:", 0) == 0) std::istringstream(line.substr(14)) >> huge_kib;
    }
    CHECK(huge_kib > 0);
}
