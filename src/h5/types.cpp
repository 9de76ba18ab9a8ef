#include "h5/types.hpp"

namespace trainrt::h5 {

Datatype copy_type(hid_t type, const std::string& what) { return Datatype(TRAINRT_H5(H5Tcopy(type), what)); }

Datatype string_type(std::size_t bytes, const std::string& what) {
    Datatype type = copy_type(H5T_C_S1, what);
    TRAINRT_H5(H5Tset_size(type.get(), bytes), what);
    return type;
}

Datatype float16_type(hid_t float_type, const std::string& what) {
    Datatype type = copy_type(float_type, what);
    TRAINRT_H5(H5Tset_fields(type.get(), 15, 10, 5, 0, 10), what);
    TRAINRT_H5(H5Tset_size(type.get(), 2), what);
    TRAINRT_H5(H5Tset_ebias(type.get(), 15), what);
    return type;
}

Datatype compound_type(std::size_t size, const std::vector<CompoundMember>& members, const std::string& what) {
    Datatype type(TRAINRT_H5(H5Tcreate(H5T_COMPOUND, size), what));
    for (const CompoundMember& member : members)
        TRAINRT_H5(H5Tinsert(type.get(), member.name.c_str(), member.offset, member.type),
                   what + ": " + member.name);
    return type;
}

H5T_class_t type_class(hid_t type, const std::string& what) { return TRAINRT_H5(H5Tget_class(type), what); }

std::size_t type_size(hid_t type, const std::string& what) {
    return locked([&] {  // 0 means failure, read before the lock is released
        const std::size_t size = H5Tget_size(type);
        if (size == 0) throw_error("H5Tget_size", what);
        return size;
    });
}

H5T_sign_t type_sign(hid_t type, const std::string& what) { return TRAINRT_H5(H5Tget_sign(type), what); }

bool same_type(hid_t a, hid_t b, const std::string& what) { return TRAINRT_H5(H5Tequal(a, b), what) > 0; }

unsigned member_count(hid_t type, const std::string& what) {
    return static_cast<unsigned>(TRAINRT_H5(H5Tget_nmembers(type), what));
}

std::string member_name(hid_t type, unsigned member, const std::string& what) {
    return locked([&] {  // NULL means failure, read before the lock is released
        const Memory name(H5Tget_member_name(type, member));
        if (!name) throw_error("H5Tget_member_name", what);
        return std::string(name.get());
    });
}

Datatype member_type(hid_t type, unsigned member, const std::string& what) {
    return Datatype(TRAINRT_H5(H5Tget_member_type(type, member), what));
}

void enum_member_value(hid_t type, unsigned member, void* value, const std::string& what) {
    TRAINRT_H5(H5Tget_member_value(type, member, value), what);
}

Datatype base_type(hid_t type, const std::string& what) { return Datatype(TRAINRT_H5(H5Tget_super(type), what)); }

}  // namespace trainrt::h5
