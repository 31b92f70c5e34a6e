// The shared library's own translation unit: the API itself comes from cxlccl_core (whole
// archive), and cxlccl.map keeps only the cxlccl* C symbols visible.
#include "cxlccl.h"
