#pragma once
// PMI_process_mapping, the value MPICH's PMI-1 client asks for to learn which ranks share a node
// (MPIR_NODEMAP_parse_mapping in MPICH 4.0): `(vector,(start,nodes,ppn),...)`, where each block
// puts `ppn` consecutive ranks on each of the `nodes` nodes numbered from `start`, blocks in rank
// order. MPICH uses the numbers as node indices, so they must be dense from 0.
#include <string>
#include <vector>

namespace trainrt::launch::pmi1 {

// `node_of_rank[r]`: any node identifier for rank r (e.g. PMIx's node id). Nodes are renumbered
// 0, 1, ... in order of their first rank. Throws LaunchError when `node_of_rank` is empty.
std::string format_process_mapping(const std::vector<int>& node_of_rank);

}  // namespace trainrt::launch::pmi1
