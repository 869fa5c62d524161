# A gzipped pprof profile through a strict proto3 decoder (Debian's python3-protobuf, its C++
# implementation): every string of the table must be valid UTF-8, as the specification says and
# Go's and Java's decoders check. The descriptor is built here with the one field this needs
# (Profile.string_table = 6); the decoder skips the rest. Prints the strings with U+FFFD.
# usage: /usr/bin/python3 pprof_strict.py PROFILE.pb.gz
import gzip, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

f = descriptor_pb2.FileDescriptorProto(name="pprof_strict.proto", package="perftools.profiles",
                                       syntax="proto3")
m = f.message_type.add(name="Profile")
m.field.add(name="string_table", number=6, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
pool = descriptor_pool.DescriptorPool()
pool.Add(f)
Profile = message_factory.MessageFactory(pool).GetPrototype(
    pool.FindMessageTypeByName("perftools.profiles.Profile"))
p = Profile()
try:
    p.ParseFromString(gzip.open(sys.argv[1]).read())
except DecodeError as e:
    sys.exit("%s: a strict decoder rejects it: %s" % (sys.argv[1], e))
bad = [s for s in p.string_table if "\ufffd" in s]
print("%d strings, %d with U+FFFD" % (len(p.string_table), len(bad)))
