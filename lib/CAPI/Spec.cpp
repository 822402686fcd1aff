//===- Spec.cpp - #rope.spec attributes as JSON ---------------------------===//
//
// The C API of include/rope-c/Spec.h. The attribute's grammar, defaults and
// rules stay with the dialect (parser, printer, verifiers); this file only
// maps its parameters to JSON and back.
//
//===----------------------------------------------------------------------===//

#include "rope-c/Spec.h"

#include "Diagnostics.h"

#include "rope/Dialect/Rope/IR/RopeAttrs.h"
#include "rope/Dialect/Rope/IR/RopeDialect.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::rope;
using capi::copyString;
using capi::toJson;

namespace {

using EmitError = llvm::function_ref<InFlightDiagnostic()>;

//===----------------------------------------------------------------------===//
// Attribute to JSON
//===----------------------------------------------------------------------===//

llvm::json::Value optionalJson(std::optional<double> value) {
  return value ? llvm::json::Value(*value) : llvm::json::Value(nullptr);
}

llvm::json::Array listJson(llvm::ArrayRef<double> values) {
  return llvm::json::Array(values);
}

llvm::json::Object scalingJson(ScalingAttrInterface scaling) {
  llvm::json::Object out;
  if (auto linear = dyn_cast<LinearScalingAttr>(scaling)) {
    out["kind"] = "linear";
    out["factor"] = linear.getFactor();
  } else if (auto dynamic = dyn_cast<DynamicScalingAttr>(scaling)) {
    out["kind"] = "dynamic";
    out["factor"] = dynamic.getFactor();
    out["original_max_position_embeddings"] =
        dynamic.getOriginalMaxPositionEmbeddings();
  } else if (auto yarn = dyn_cast<YarnScalingAttr>(scaling)) {
    out["kind"] = "yarn";
    out["factor"] = yarn.getFactor();
    out["original_max_position_embeddings"] =
        yarn.getOriginalMaxPositionEmbeddings();
    out["beta_fast"] = yarn.getBetaFast();
    out["beta_slow"] = yarn.getBetaSlow();
    out["mscale"] = optionalJson(yarn.getMscale());
    out["mscale_all_dim"] = optionalJson(yarn.getMscaleAllDim());
    out["truncate"] = yarn.getTruncate();
  } else if (auto llama3 = dyn_cast<Llama3ScalingAttr>(scaling)) {
    out["kind"] = "llama3";
    out["factor"] = llama3.getFactor();
    out["low_freq_factor"] = llama3.getLowFreqFactor();
    out["high_freq_factor"] = llama3.getHighFreqFactor();
    out["original_max_position_embeddings"] =
        llama3.getOriginalMaxPositionEmbeddings();
  } else if (auto longrope = dyn_cast<LongRopeScalingAttr>(scaling)) {
    out["kind"] = "longrope";
    out["short_factor"] = listJson(longrope.getShortFactor());
    out["long_factor"] = listJson(longrope.getLongFactor());
    out["factor"] = longrope.getFactor();
    out["original_max_position_embeddings"] =
        longrope.getOriginalMaxPositionEmbeddings();
  } else if (auto factors = dyn_cast<FreqFactorsScalingAttr>(scaling)) {
    out["kind"] = "freq_factors";
    out["factors"] = listJson(factors.getFactors());
  }
  return out;
}

llvm::json::Object specJson(RotarySpecAttr spec) {
  llvm::json::Object out;
  out["base"] = spec.getBase();
  out["dims"] = spec.getDims();
  out["offset"] = spec.getOffset();
  out["layout"] = stringifyRotaryLayout(spec.getLayout());
  out["scaling"] = spec.getScaling()
                       ? llvm::json::Value(scalingJson(spec.getScaling()))
                       : llvm::json::Value(nullptr);
  out["attention_factor"] = optionalJson(spec.getAttentionFactor());
  out["inverse"] = spec.getInverse();
  return out;
}

//===----------------------------------------------------------------------===//
// JSON to attribute
//===----------------------------------------------------------------------===//

/// Reads the keys of one JSON object, each with its default, and reports the
/// first key of the wrong type or one it does not know.
class FieldReader {
public:
  FieldReader(const llvm::json::Object &object, llvm::StringRef what,
              EmitError emitError)
      : object(object), what(what), emitError(emitError) {}

  double number(llvm::StringRef key, std::optional<double> byDefault) {
    std::optional<double> value = optionalNumber(key);
    if (!value && !byDefault)
      return missing(key), 0.0;
    return value ? *value : *byDefault;
  }

  std::optional<double> optionalNumber(llvm::StringRef key) {
    const llvm::json::Value *value = take(key);
    if (!value || value->getAsNull())
      return std::nullopt;
    if (std::optional<double> number = value->getAsNumber())
      return number;
    wrongType(key, "a number");
    return std::nullopt;
  }

  int64_t integer(llvm::StringRef key, std::optional<int64_t> byDefault) {
    const llvm::json::Value *value = take(key);
    if (!value || value->getAsNull()) {
      if (!byDefault)
        missing(key);
      return byDefault.value_or(0);
    }
    if (std::optional<int64_t> number = value->getAsInteger())
      return *number;
    wrongType(key, "an integer");
    return 0;
  }

  bool boolean(llvm::StringRef key, bool byDefault) {
    const llvm::json::Value *value = take(key);
    if (!value || value->getAsNull())
      return byDefault;
    if (std::optional<bool> flag = value->getAsBoolean())
      return *flag;
    wrongType(key, "true or false");
    return byDefault;
  }

  llvm::SmallVector<double> list(llvm::StringRef key) {
    llvm::SmallVector<double> values;
    const llvm::json::Value *value = take(key);
    const llvm::json::Array *array = value ? value->getAsArray() : nullptr;
    if (!array) {
      value ? wrongType(key, "a list of numbers") : missing(key);
      return values;
    }
    for (const llvm::json::Value &element : *array) {
      std::optional<double> number = element.getAsNumber();
      if (!number)
        return wrongType(key, "a list of numbers"), values;
      values.push_back(*number);
    }
    return values;
  }

  std::optional<llvm::StringRef> string(llvm::StringRef key) {
    const llvm::json::Value *value = take(key);
    if (!value || value->getAsNull())
      return std::nullopt;
    if (std::optional<llvm::StringRef> text = value->getAsString())
      return text;
    wrongType(key, "a string");
    return std::nullopt;
  }

  const llvm::json::Object *nestedObject(llvm::StringRef key) {
    const llvm::json::Value *value = take(key);
    if (!value || value->getAsNull())
      return nullptr;
    if (const llvm::json::Object *nested = value->getAsObject())
      return nested;
    wrongType(key, "an object");
    return nullptr;
  }

  /// Success when every key was known and well typed.
  LogicalResult finish() {
    for (const auto &entry : object)
      if (!seen.contains(entry.first)) {
        emitError() << what << " has no parameter '" << entry.first.str()
                    << "'";
        failed = true;
        break;
      }
    return failure(failed);
  }

private:
  const llvm::json::Value *take(llvm::StringRef key) {
    seen.insert(key);
    return object.get(key);
  }
  void missing(llvm::StringRef key) {
    emitError() << what << " needs '" << key << "'";
    failed = true;
  }
  void wrongType(llvm::StringRef key, llvm::StringRef expected) {
    emitError() << what << " '" << key << "' must be " << expected;
    failed = true;
  }

  const llvm::json::Object &object;
  std::string what;
  EmitError emitError;
  llvm::StringSet<> seen;
  bool failed = false;
};

/// The scaling attribute of a "scaling" object (null on failure, reported).
ScalingAttrInterface scalingFromJson(const llvm::json::Object &object,
                                     MLIRContext *context,
                                     EmitError emitError) {
  std::optional<llvm::StringRef> kind = object.getString("kind");
  if (!kind) {
    emitError() << "a scaling needs a 'kind' string";
    return {};
  }
  FieldReader in(object, ("'" + *kind + "' scaling").str(), emitError);
  in.string("kind");
  const char *orig = "original_max_position_embeddings";
  Attribute scaling;
  if (*kind == "linear") {
    double factor = in.number("factor", std::nullopt);
    if (succeeded(in.finish()))
      scaling = LinearScalingAttr::getChecked(emitError, context, factor);
  } else if (*kind == "dynamic") {
    double factor = in.number("factor", std::nullopt);
    int64_t original = in.integer(orig, std::nullopt);
    if (succeeded(in.finish()))
      scaling = DynamicScalingAttr::getChecked(emitError, context, factor,
                                               original);
  } else if (*kind == "yarn") {
    double factor = in.number("factor", std::nullopt);
    int64_t original = in.integer(orig, std::nullopt);
    double betaFast = in.number("beta_fast", 32.0);
    double betaSlow = in.number("beta_slow", 1.0);
    std::optional<double> mscale = in.optionalNumber("mscale");
    std::optional<double> mscaleAllDim = in.optionalNumber("mscale_all_dim");
    bool truncate = in.boolean("truncate", true);
    if (succeeded(in.finish()))
      scaling = YarnScalingAttr::getChecked(emitError, context, factor,
                                            original, betaFast, betaSlow,
                                            mscale, mscaleAllDim, truncate);
  } else if (*kind == "llama3") {
    double factor = in.number("factor", std::nullopt);
    double low = in.number("low_freq_factor", 1.0);
    double high = in.number("high_freq_factor", 4.0);
    int64_t original = in.integer(orig, std::nullopt);
    if (succeeded(in.finish()))
      scaling = Llama3ScalingAttr::getChecked(emitError, context, factor, low,
                                              high, original);
  } else if (*kind == "longrope") {
    llvm::SmallVector<double> shortFactor = in.list("short_factor");
    llvm::SmallVector<double> longFactor = in.list("long_factor");
    double factor = in.number("factor", 1.0);
    int64_t original = in.integer(orig, std::nullopt);
    if (succeeded(in.finish()))
      scaling = LongRopeScalingAttr::getChecked(
          emitError, context, llvm::ArrayRef<double>(shortFactor),
          llvm::ArrayRef<double>(longFactor), factor, original);
  } else if (*kind == "freq_factors") {
    llvm::SmallVector<double> factors = in.list("factors");
    if (succeeded(in.finish()))
      scaling = FreqFactorsScalingAttr::getChecked(
          emitError, context, llvm::ArrayRef<double>(factors));
  } else {
    emitError() << "unknown scaling kind '" << *kind
                << "' (linear, dynamic, yarn, llama3, longrope, freq_factors)";
  }
  return dyn_cast_or_null<ScalingAttrInterface>(scaling);
}

RotarySpecAttr specFromJson(const llvm::json::Object &object,
                            MLIRContext *context, EmitError emitError) {
  FieldReader in(object, "a rotary spec", emitError);
  double base = in.number("base", 10000.0);
  int64_t dims = in.integer("dims", 0);
  int64_t offset = in.integer("offset", 0);
  RotaryLayout layout = RotaryLayout::half;
  if (std::optional<llvm::StringRef> name = in.string("layout")) {
    std::optional<RotaryLayout> parsed = symbolizeRotaryLayout(*name);
    if (!parsed) {
      emitError() << "unknown layout '" << *name << "' (half, interleaved)";
      return {};
    }
    layout = *parsed;
  }
  ScalingAttrInterface scaling;
  if (const llvm::json::Object *nested = in.nestedObject("scaling")) {
    scaling = scalingFromJson(*nested, context, emitError);
    if (!scaling)
      return {};
  }
  std::optional<double> attentionFactor = in.optionalNumber("attention_factor");
  bool inverse = in.boolean("inverse", false);
  if (failed(in.finish()))
    return {};
  return RotarySpecAttr::getChecked(emitError, context, base, dims, offset,
                                    layout, scaling, attentionFactor, inverse);
}

/// A context with only our dialect, and the diagnostics it reports.
struct SpecContext {
  SpecContext() : recorder(&context, "<rope.spec>") {
    context.loadDialect<RopeDialect>();
  }
  MLIRContext context{MLIRContext::Threading::DISABLED};
  capi::DiagnosticRecorder recorder;

  InFlightDiagnostic emitError() {
    return mlir::emitError(UnknownLoc::get(&context));
  }

  int fail(char **diagnostics) {
    if (diagnostics)
      *diagnostics = recorder.take();
    return 1;
  }
};

} // namespace

extern "C" int ropeSpecParse(const char *text, size_t length, char **json,
                             char **diagnostics) {
  SpecContext spec;
  // Without a `numRead`, the parser rejects text after the attribute.
  Attribute attr =
      parseAttribute(llvm::StringRef(text, length).trim(), &spec.context);
  auto rotary = dyn_cast_or_null<RotarySpecAttr>(attr);
  if (attr && !rotary)
    spec.emitError() << "expected a #rope.spec attribute, got " << attr;
  if (!rotary)
    return spec.fail(diagnostics);
  *json = copyString(toJson(specJson(rotary)));
  return 0;
}

extern "C" int ropeSpecPrint(const char *json, size_t length, char **text,
                             char **diagnostics) {
  SpecContext spec;
  auto emitError = [&] { return spec.emitError(); };
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(json, length));
  if (!value) {
    emitError() << "invalid JSON: " << llvm::toString(value.takeError());
    return spec.fail(diagnostics);
  }
  const llvm::json::Object *object = value->getAsObject();
  if (!object) {
    emitError() << "a rotary spec must be a JSON object";
    return spec.fail(diagnostics);
  }
  RotarySpecAttr attr = specFromJson(*object, &spec.context, emitError);
  if (!attr)
    return spec.fail(diagnostics);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  Attribute(attr).print(os);
  *text = copyString(printed);
  return 0;
}
