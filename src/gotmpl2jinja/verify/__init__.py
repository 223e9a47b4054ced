"""Stage 6, verify: the conversation contract, the conversations drawn from it, and the
differential harness that renders Go and Jinja on them and shrinks a divergence.

May depend on every earlier stage: `errors`, `syntax`, `ollama`, `analysis`, `emit`, `engines`.
"""

from gotmpl2jinja.verify.check import TranslationDiverged, check_translation
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import Divergence, VerifyResult

__all__ = ["Divergence", "TranslationDiverged", "VerifyResult", "check_translation",
           "verify_template"]
