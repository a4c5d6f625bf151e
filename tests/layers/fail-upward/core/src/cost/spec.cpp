#include "kvbe/model/spec.h"
