"""The words the move parser reads, by language; the rules that use them are in harness.players.model.parsing.policy.

Kept apart so the rules read as rules and the vocabulary can grow without touching them. Every
entry is a regex fragment, matched case-insensitively on NFKC-normalised text (full-width
punctuation already turned into ASCII, accents kept: "cooperó", he cooperated, must not read as
"coopero", I cooperate). Languages: English, Spanish, French, German, Portuguese, Italian, Dutch,
Russian, Hindi, Arabic, Chinese, Japanese, Korean, Turkish and Polish.
Chinese has no spaces between words, so its fragments are listed apart and never get word
boundaries.
"""

from __future__ import annotations

import re

# --- move words: they name the moves under any labels (see ActionLabels) ---------------------------

# Infinitives, nouns, gerunds and first-person forms. A form that another person could also
# say ("coopère": I or he cooperates) only counts after a first-person subject (see SUBJECTS).
COOPERATE_WORDS: tuple[str, ...] = (
    "cooperar",
    "coopero",
    "cooperaré",
    "cooperare",
    "cooperación",
    "cooperacion",
    "cooperando",  # es
    "cooperarei",
    "cooperação",
    "cooperacao",  # pt (cooperar, coopero, cooperando: see es)
    "coopérer",
    "cooperer",
    "coopère",
    "coopérerai",
    "coopererai",
    "coopération",  # fr
    "kooperieren",
    "kooperiere",
    "kooperiere ich",
    "kooperation",  # de
    "合作",  # zh
    "cooperazione",
    "coopererò",
    "coopererei",  # it (cooperare, coopero: see es)
    "samenwerken",
    "samenwerking",
    "werk samen",
    "werk ik samen",  # nl
    "сотрудничать",
    "сотрудничаю",
    "сотрудничество",
    "сотрудничества",
    "сотрудничаем",  # ru
    "協力",  # ja
    "협력",  # ko
    "सहयोग",  # hi
    "التعاون",
    "تعاون",
    "أتعاون",
    "سأتعاون",  # ar
    "coop",
    "co-op",  # en, informal
    "işbirliği yapıyorum",
    "iş birliği yapıyorum",
    "işbirliği yapacağım",
    "iş birliği yapacağım",
    "işbirliği yaparım",  # tr
    # refusals of the other move, where the negation is part of the verb (so no negation rule can see it)
    "裏切りません",
    "裏切らない",
    "裏切らず",  # ja: I will not betray
    "배신하지 않겠습니다",
    "배신하지 않습니다",
    "배신하지 않을게요",
    "배신 안 할게요",  # ko
    "धोखा नहीं दूँगा",
    "धोखा नहीं दूंगा",
    "धोखा नहीं दूँगी",
    "धोखा नहीं दूंगी",  # hi
    "不背叛",
    "不会背叛",
    "不再背叛",  # zh
    "ihanet etmiyorum",
    "ihanet etmeyeceğim",  # tr
    "współpracować",
    "współpracuję",
    "współpracuje",
    "współpraca",
    "współpracę",
    "współpracy",  # pl
)
DEFECT_WORDS: tuple[str, ...] = (
    "traicionar",
    "traiciono",
    "traicionaré",
    "traicionare",
    "traición",
    "traicion",
    "traicionando",  # es
    "desertar",
    "deserto",
    "desertaré",
    "desertare",
    "deserción",
    "desercion",
    "desertando",
    "trair",
    "traio",
    "trairei",
    "traição",
    "traicao",
    "traindo",
    "desertarei",
    "deserção",
    "desercao",  # pt
    "trahir",
    "trahis",
    "trahirai",
    "trahison",
    "défection",
    "faire défection",
    "fais défection",  # fr
    "ferai défection",
    "verraten",
    "verrate",
    "verrate ich",
    "verrat",
    "defektieren",
    "defektiere",
    "defektiere ich",  # de
    "背叛",
    "不合作",  # zh ("not cooperate" is the other move, not a negation of one)
    "tradire",
    "tradisco",
    "tradirò",
    "tradimento",
    "defezionare",
    "defeziono",
    "defezione",  # it
    "verraden",
    "verraad",
    "defecteren",
    "defecteer",
    "werk niet samen",
    "werk ik niet samen",  # nl (a refusal of "werk samen", with the negation inside the verb)
    "предать",
    "предаю",
    "предам",
    "предавать",
    "предательство",  # ru
    "裏切り",
    "裏切る",  # ja
    "배신",  # ko
    "धोखा",  # hi
    "الخيانة",
    "خيانة",
    "أخون",
    "سأخون",  # ar
    "betray",
    "betrayal",
    "betraying",  # en: the move's meaning, named as often as "defect"
    "ihanet ediyorum",
    "ihanet edeceğim",
    "ihanet ederim",  # tr
    "協力しません",
    "協力しない",
    "協力はしません",  # ja: I will not cooperate
    "협력하지 않겠습니다",
    "협력하지 않습니다",
    "협력하지 않을게요",
    "협력 안 할게요",  # ko
    "सहयोग नहीं करूँगा",
    "सहयोग नहीं करूंगा",
    "सहयोग नहीं करूँगी",
    "सहयोग नहीं करूंगी",  # hi
    "不会合作",
    "不再合作",  # zh
    "işbirliği yapmıyorum",
    "işbirliği yapmayacağım",
    "iş birliği yapmıyorum",
    "iş birliği yapmayacağım",  # tr
    "zdradzić",
    "zdradzam",
    "zdradzę",
    "zdrada",
    "zdradę",  # pl
)

# The option named by its character: "the cooperative option", "the selfish choice", "the trusting one".
_OPTION_NOUNS = ("option", "choice", "move", "one", "action", "path", "play")
_COOPERATIVE = ("cooperative", "collaborative", "trusting", "friendly", "nice", "prosocial", "generous")
_DEFECTING = ("selfish", "uncooperative", "competitive", "exploitative", "greedy", "betraying", "defecting")
COOPERATE_WORDS += tuple(f"{the}{a} {n}" for the in ("", "the ") for a in _COOPERATIVE for n in _OPTION_NOUNS)
# The move's meaning in other words: "I'll stay cooperative", "I'll work together with them".
COOPERATE_WORDS += (
    *(f"{verb} cooperative" for verb in ("stay", "be", "remain", "staying", "being", "remaining")),
    *("work together", "working together", "team up", "play nice", "play fair"),
)
DEFECT_WORDS += tuple(f"{the}{a} {n}" for the in ("", "the ") for a in _DEFECTING for n in _OPTION_NOUNS)

# First-person forms that are a statement on their own, no subject needed: "Coopero." (es/pt),
# "Deshalb kooperiere ich." (de, inverted). "deserto" is left out: it is also "desert".
SELF_STATEMENTS: tuple[str, ...] = (
    "coopero",
    "cooperaré",
    "cooperare",
    "cooperarei",
    "traiciono",
    "traicionaré",
    "traicionare",
    "desertaré",
    "desertare",
    "desertarei",
    "traio",
    "trairei",
    "kooperiere ich",
    "verrate ich",
    "defektiere ich",
    "tradisco",
    "tradirò",
    "coopererò",
    "werk samen",
    "werk ik samen",
    "сотрудничаю",
    "предаю",
    "предам",
    "سأتعاون",
    "أتعاون",
    "سأخون",
    "أخون",
    "işbirliği yapıyorum",
    "iş birliği yapıyorum",
    "işbirliği yapacağım",
    "iş birliği yapacağım",
    "işbirliği yaparım",
    "ihanet ediyorum",
    "ihanet edeceğim",
    "ihanet ederim",
    "współpracuję",
    "zdradzam",
    "zdradzę",
    "裏切りません",
    "裏切らない",
    "協力しません",
    "協力しない",
    "協力はしません",
    "배신하지 않겠습니다",
    "배신하지 않습니다",
    "협력하지 않겠습니다",
    "협력하지 않습니다",
    "ihanet etmiyorum",
    "ihanet etmeyeceğim",
    "işbirliği yapmıyorum",
    "işbirliği yapmayacağım",
)
# Japanese and Korean put the verb after the move: 協力します, Cを選びます, D를 선택합니다, 배신하겠습니다.
CJK_VERBS_AFTER = (
    r"(?:を|に)?\s*(?:選びます|選ぶ|選択します|選択する|選択|します|する|しよう|しましょう|でいきます|にします|ます|ましょう)"
    r"|(?:를|을|로|으로)?\s*(?:선택합니다|선택하겠습니다|선택할게요|선택|고르겠습니다|하겠습니다|합니다|할게요|하겠어요)"
)
# Hindi and Turkish also put the verb after the move: "मैं J चुनता हूँ", "C'yi seçiyorum" (the Turkish case
# suffix is written after an apostrophe, so these are matched on a token that may carry one).
MY_CHOICE = r"my\s+(?:final\s+)?(?:choice|pick|answer|move|decision|call|play)\b"
VERBS_AFTER = (
    r"(?:['’](?:y?[ıiuü]|n?[ae]|d[ae]n|t[ae]n))?\s*(?:se[çc]ene[ğg]ini\s+)?(?:seçiyorum|seçeceğim|seçerim|oynuyorum"
    r"|oynayacağım)"
    r"|\s*(?:को\s+)?(?:चुनता|चुनती|चुनूँगा|चुनूंगा|चुनूँगी|चुनूंगी|चुनेंगे|चुनें|चुन\s+रहा|चुन\s+रही|खेलूँगा|खेलूंगा)"
    # English, the move before its verb: "J remains my choice", "F stays my answer", "C is still my pick"
    rf"|[*_`'\"]*\s+(?:remains|stays|is\s+still|will\s+remain|will\s+stay)\s+{MY_CHOICE}"
)

# --- who speaks: first-person subjects followed directly by the move ---------------------------

_EN_ADVERB = (
    r"(?:definitely|certainly|probably|now|again|also|still|just|therefore|thus|then|simply|clearly"
    r"|obviously|once\s+again|once\s+more|actually|really|happily|gladly|instead|rather)"
)
_EN_VERB = (
    r"(?:choose|pick|select|play|go\s+with|go\s+for|opt\s+for|opt\s+to|stick\s+with|stay\s+with|continue\s+to"
    r"|continue\s+with|continue|keep|respond\s+with|answer\s+with|reply\s+with|say|return\s+to|start\s+with"
    r"|go\s+back\s+to|come\s+back\s+to|get\s+back\s+to|revert\s+to|stick\s+to|settle\s+on"
    r"|begin\s+with|open\s+with|switch\s+to|switch\s+back\s+to|move\s+to|take|lean\s+towards?"
    r"|change(?:\s+my\s+(?:answer|move|choice|decision))?\s+to|(?:change|revise|switch|correct|update|turn)\s+(?:it|that|this)\s+to|play\s+it\s+safe\s+with)"
)
_EN_GERUND = (
    r"choosing|picking|selecting|playing|taking|going\s+(?:with|for)|staying\s+with|sticking\s+with|opting\s+for"
    r"|returning\s+to|switching\s+to"
)
_DE_ADVERB = r"(?:ebenfalls|auch|wieder|weiterhin|diesmal|jetzt|dann|also|doch|lieber|trotzdem|erneut|nun)"

# A "would" subject ("I'd cooperate") is a decision in the conditional mood: it counts, but it
# never revises an earlier decision (see harness.players.model.parsing.policy).
WOULD_SUBJECTS = (
    rf"i(?:['’]d|\s+would)(?:\s+{_EN_ADVERB})*(?:\s+(?:rather|prefer\s+to|{_EN_VERB}))?",
    rf"ich\s+w[üu]rde(?:\s+{_DE_ADVERB})*",
    r"my\s+(?:final\s+)?(?:move|choice|action|decision|answer|response|pick)\s+would\s+be",
)
SUBJECTS = (
    # en
    rf"i(?:\s+will|\s+shall|['’]ll|\s+am\s+going\s+to|['’]m\s+going\s+to|\s+want\s+to|\s+would\s+like\s+to"
    rf"|\s+need\s+to|\s+have\s+to|\s+must|\s+plan\s+to|\s+intend\s+to)(?:\s+{_EN_ADVERB})*(?:\s+{_EN_VERB})?",
    # "I'll be generous this time and cooperate"
    r"i(?:\s+will|['’]ll|\s+(?:choose|decide|want|have\s+decided|decided)\s+to)\s+(?!not\b|never\b)(?:(?!between\b)[^\W\d_]+\s+){1,5}?and"
    r"(?:\s+then)?",
    r"i(?:\s+am|['’]m)(?:\s+(?:choosing|picking|playing|going\s+with|sticking\s+with|staying\s+with|opting\s+for"
    r"|leaning\s+towards?|switching\s+to|changing(?:\s+my\s+(?:answer|move|choice|decision))?\s+to))?",
    # "I will not cooperate but defect", "Ich werde nicht kooperieren, sondern defektieren"
    r"(?:i\s+will|i['’]ll|i\s+won['’]t|ich\s+werde)(?:\s+not|\s+nicht)?\s+[^\W\d_]+,?\s+(?:but(?:\s+rather)?|sondern)",
    rf"i(?:\s+{_EN_ADVERB})?\s+(?:{_EN_VERB}|decide|have\s+decided|decided|have\s+chosen|am\s+choosing)",
    r"i(?:['’]ve|\s+have)\s+(?:decided(?:\s+on)?|chosen|picked|gone\s+with|settled\s+on|opted\s+for)",
    r"my\s+(?:final\s+)?(?:move|choice|action|decision|answer|response|pick|play|call)"
    rf"(?:\s+(?:for|in)\s+this\s+round|\s+this\s+round|\s+here|\s+now)?\s+(?:is|will\s+be)(?:\s+{_EN_ADVERB})?",
    rf"the\s+answer\s+is(?:\s+{_EN_ADVERB})?",
    rf"let(?:['’]s|\s+us|\s+me)(?:\s+{_EN_VERB})?",
    # es
    r"(?:yo\s+)?(?:elijo|escojo|decido|voy\s+a|prefiero|opto\s+por|me\s+quedo\s+con|juego|jugaré|elegiré"
    r"|escogeré|sigo|seguiré)(?:\s+(?:jugar|elegir|la\s+opci[oó]n))?",
    r"(?:mi|la)\s+(?:respuesta|elecci[oó]n|decisi[oó]n|jugada)(?:\s+final)?\s+es",
    # fr
    r"je(?:\s+(?:vais|veux|choisis|d[ée]cide|pr[ée]f[èe]re|opte\s+pour|joue|prends|fais|ferai|continue"
    r"|continuerai)(?:\s+de|\s+d['’]|\s+[àa])?)?",
    r"(?:ma|la)\s+(?:r[ée]ponse|d[ée]cision)(?:\s+finale)?\s+est|mon\s+choix(?:\s+final)?\s+est",
    # de
    rf"ich(?:\s+(?:werde|will|w[äa]hle|nehme|spiele|m[öo]chte|bleibe\s+bei|entscheide\s+mich\s+(?:f[üu]r|zu)))?"
    rf"(?:\s+{_DE_ADVERB})*",
    rf"(?:werde|w[äa]hle|nehme|spiele)\s+ich(?:\s+{_DE_ADVERB})*",
    r"(?:meine|die)\s+(?:antwort|wahl|entscheidung)\s+ist",
    # pt
    r"(?:eu\s+)?(?:escolho|decido|vou|prefiro|opto\s+por|fico\s+com|jogo|escolherei|continuo\s+a"
    r"|vou\s+continuar\s+a)(?:\s+(?:jogar|escolher))?",
    r"eu",
    r"(?:minha|a)\s+(?:resposta|escolha|decis[ãa]o|jogada)(?:\s+final)?\s+[ée]",
    # it
    r"(?:io\s+)?(?:scelgo|decido|voglio|opto\s+per|gioco|sceglier[òo]|giocher[òo]|continuo\s+a)(?:\s+di)?",
    r"(?:la\s+)?mia\s+(?:scelta|risposta|decisione|mossa)(?:\s+finale)?\s+[èe]",
    # nl
    r"ik(?:\s+(?:kies|ga|speel|neem|wil|blijf))?(?:\s+(?:ervoor\s+om|voor|bij))?(?:\s+te)?",
    r"(?:mijn|het)\s+(?:keuze|antwoord|besluit)\s+is",
    # ru
    r"(?:я\s+)?(?:выбираю|выберу|буду|решил[аи]?|решаю|продолжу|продолжаю|предпочитаю)|я",
    r"(?:мой|моё|мое)\s+(?:выбор|ответ|решение)(?:\s*[—-]|\s+это)?",
    # hi
    r"मैं(?:\s+(?:फिर\s+से|इस\s+बार))?",
    r"मेरा\s+(?:चुनाव|उत्तर|जवाब|निर्णय|विकल्प)(?:\s+है)?",
    # ar
    r"(?:أنا\s+)?(?:أختار|سأختار|اخترت|قررت|أقرر|سألعب|ألعب)",
    r"(?:اختياري|قراري|إجابتي)(?:\s+هو)?",
    # pl
    r"(?:ja\s+)?(?:wybieram|wybiorę|gram|zagram|decyduję\s+się\s+na|stawiam\s+na|będę)",
    r"(?:moja|mój|moje)\s+(?:odpowiedź|wybór|decyzja|ruch)\s+(?:to|jest)",
    # tr ("seçimim C", "cevabım D")
    r"(?:seçimim|cevabım|kararım|yanıtım|tercihim)(?:\s+de)?",
)
# Chinese subjects take the move with no space: 我选择合作, 我会继续合作, 我的选择是合作.
CJK_SUBJECTS = (
    r"我(?:的(?:选择|决定|答案|回答)(?:是|为)?|(?:也|还是|就|先|会|将|要|打算|决定|选择|选|继续|愿意)*)",
    r"(?:最终)?(?:答案|选择)(?:是|为)",
    r"(?:私の)?(?:選択|答え|回答)は|私は",
    r"(?:제|나의|내)\s*(?:선택|답|답변)은|저는|나는|저도|나도",
    # a bare 选 ("choose") at a clause start, not after another player: 这一轮选F, 那就选J
    r"(?:(?<=^)|(?<=[\s,.!:;\"]))(?:这一?轮|本轮|这次|这回|这轮|那就|就|所以|因此)?[,\s]*(?:还是|就|也)?选择?",
)

# "Option" in the languages beyond the first five: вариант J, विकल्प F, الخيار J, opzione J, optie F, opcję C.
_OPTION_WORDS = (
    r"(?:l['’])?opzione|optie|вариант|опция|опцию|विकल्प|الخيار|opcj[aęi]|seçenek|選択肢|オプション|옵션|선택지"
)
OPTION_WORDS = _OPTION_WORDS
# What may stand between a subject and the move: "I choose option C", "I will play: **D**".
OPTION = (
    r"(?:(?:the\s+)?option\s+|la\s+opci[oó]n\s+|l['’]option\s+|die\s+option\s+|a\s+op[cç][ãa]o\s+|选项"
    rf"|(?:{_OPTION_WORDS})\s*)?"
)

# --- lines that carry an answer ------------------------------------------------------------

# "Final answer: X", anywhere in a line.
FINAL_KEYS = (
    r"(?:(?:my|the|our)\s+)?final\s+(?:answer|action|move|choice|decision|response|pick|play|verdict)",
    r"(?:mi\s+)?(?:respuesta|decisi[oó]n|elecci[oó]n)\s+final",
    r"(?:ma\s+)?r[ée]ponse\s+finale|(?:mon\s+)?choix\s+final",
    r"(?:meine\s+)?(?:endg[üu]ltige|finale)\s+(?:antwort|entscheidung|wahl)",
    r"(?:minha\s+)?(?:resposta|decis[ãa]o|escolha)\s+final",
    r"(?:la\s+mia\s+)?(?:risposta|scelta|decisione)\s+finale",
    r"definitief\s+antwoord|eindantwoord|(?:mijn\s+)?(?:definitieve|uiteindelijke)\s+(?:keuze|antwoord)",
    r"(?:окончательный|итоговый|финальный)\s+(?:ответ|выбор)",
    r"अंतिम\s+(?:उत्तर|जवाब|निर्णय)",
    r"(?:الإجابة|الجواب|القرار|الاختيار)\s+(?:النهائية|النهائي)",
)
# Every FINAL_KEYS phrase holds one of these, so a reply without them has no final-answer line.
FINAL_GATES = ("final", "endg", "最", "defin", "eind", "uitein", "оконч", "итог", "финал", "अंतिम", "النهائ")
FINAL_VERBS = r"(?:[:=]|is\b:?|will\s+be\b:?|es\b:?|est\b:?|ist\b:?|[ée]\b:?)"
CJK_FINAL_KEYS = (
    r"(?:最终|最后|最終)(?:的|的な)?(?:答案|选择|决定|回答|答え|選択)(?:是|为|は)?|최종\s*(?:답변|답|선택)(?:은)?"
)

# "Answer: X" at the start of a line or sentence, or after "my" anywhere ("So, my move: D").
LINE_KEYS = (
    r"answer|action|move|choice|decision|response|pick|play|verdict"
    r"|respuesta|elecci[oó]n|decisi[oó]n|jugada|acci[oó]n|movimiento"
    r"|r[ée]ponse|choix|d[ée]cision|coup"
    r"|antwort|wahl|entscheidung|zug|aktion"
    r"|resposta|escolha|decis[ãa]o|jogada|a[çc][ãa]o"
    r"|risposta|scelta|mossa|decisione|azione"
    r"|antwoord|keuze|zet|beslissing|actie"
    r"|ответ|выбор|решение|ход|действие"
    r"|उत्तर|जवाब|चुनाव|निर्णय|الإجابة|الجواب|الاختيار|القرار"
    r"|odpowiedź|wybór|decyzja|ruch|seçimim|cevabım|kararım|yanıtım|tercihim|cevap|seçim|karar"
)
POSSESSIVES = r"(?:my|mi|ma|mon|meine|mein|minha|meu|mia|la\s+mia|il\s+mio|mijn|мой|моё|мое|मेरा|moja|mój|moje)"
CJK_LINE_KEYS = (
    r"(?:我的|私の)?(?:选择|答案|决定|回答|行动|答え|選択)|(?:제\s*|나의\s*)?(?:답변|답|선택)|(?:اختياري|إجابتي|قراري)"
)

# JSON fields and XML tags that hold the move.
JSON_KEYS = frozenset(
    {
        "action",
        "move",
        "choice",
        "decision",
        "answer",
        "final_answer",
        "your_move",
        "my_move",
        "respuesta",
        "eleccion",
        "elección",
        "jugada",
        "reponse",
        "réponse",
        "choix",
        "antwort",
        "wahl",
        "entscheidung",
        "resposta",
        "escolha",
        "jogada",
        "答案",
        "选择",
        "决定",
        "play",
        "pick",
        "option",
        "selected",
        "selection",
        "selected_option",
        "my_choice",
        "my_action",
    }
)
XML_TAGS = (
    r"answer|action|move|choice|decision|final_answer|final-answer|finalanswer|respuesta|r[ée]ponse|antwort|resposta"
)

# Reasoning blocks: a draft, not the answer, when an answer follows them.
THINK_TAGS = r"think|thinking|reasoning|reflection|scratchpad|analysis"

# --- what turns a statement into a non-decision ----------------------------------------------

# Before the statement in its sentence: "If I defect, ...", "Si traiciono, ...". Concessive
# "even if" is not a condition: "Even if they defect, I will cooperate" decides.
_CONCESSIVE = r"(?<!even\s)(?<!incluso\s)(?<!aun\s)(?<!aún\s)(?<!même\s)(?<!meme\s)(?<!selbst\s)(?<!auch\s)(?<!mesmo\s)"
_PT_SE = r"se(?=\s+(?:eu|voc[êe]|ele|ela|eles|elas|o\s+outro|o\s+oponente|n[óo]s)\b)"
# A later round, in any language: "Next round I'll defect" is a plan, not this round's move.
_LATER = (
    r"next\s+(?:round|time|turn)|later|in\s+(?:the\s+)?future|afterwards|eventually|at\s+some\s+point"
    r"|in\s+(?:later|future|coming|subsequent|the\s+coming)\s+rounds|(?:for\s+)?the\s+rest\s+of\s+the\s+game"
    r"|from\s+then\s+on|from\s+(?:round\s+\d+|the\s+next\s+round)(?:\s+on(?:wards?)?)?|after\s+that|thereafter"
    r"|going\s+forward|from\s+here\s+on\s+out|tomorrow|in\s+the\s+(?:next|coming)\s+rounds|after(?=\s*(?:[.!;,]|$))"
    r"|(?:il\s+)?prossimo\s+turno|la\s+prossima\s+volta|volgende\s+(?:ronde|keer)|следующ\w+\s+(?:раунд\w*|раз)"
    r"|(?:la|el)\s+pr[óo]xim[ao]\s+(?:ronda|vez|turno)|la\s+siguiente\s+ronda|m[áa]s\s+tarde"
    r"|(?:au|le)\s+prochain\s+tour|la\s+prochaine\s+(?:fois|manche)|plus\s+tard"
    r"|n[äa]chste[ns]?\s+(?:runde|mal)|sp[äa]ter"
    r"|pr[óo]xima\s+(?:rodada|vez)|mais\s+tarde"
)
_LATER_CJK = r"下一轮|下一回合|下次|以后|之后"
LATER = rf"\b(?:{_LATER})\b|{_LATER_CJK}"  # a later round alone, without the conditions
HYPOTHETICAL_BEFORE = (
    rf"{_CONCESSIVE}\b(?:if|whether|unless|suppose|supposing|assuming|imagine|hypothetically|in\s+case|were\s+i"
    rf"|had\s+i|otherwise|when|whenever|once(?!\s+(?:more|again))|{_LATER}|in\s+theory"
    r"|one-shot|single-shot|si|suponiendo|supongamos|en\s+caso\s+de|cuando|s['’]il|supposons|au\s+cas\s+o[uù]"
    rf"|quand|lorsque|wenn|falls|ob|angenommen|sofern|sobald|{_PT_SE}|caso|supondo|quando"
    r"|should\s+(?:they|he|she|you|the\s+other(?:\s+player)?|my\s+opponent)|were\s+(?:they|you)|had\s+(?:they|you)"
    r"|indien|если|إذا|لو)\b|अगर|यदि"
    # "one more defection from them and I'll defect": a condition in the shape of a list
    r"|\b(?:one\s+more|another|any\s+(?:more|further)|a\s+single)\s+[^\W\d_]+(?:\s+[^\W\d_]+){0,4}\s+and(?:\s+then)?\s*$"
    r"|(?:^|[,;:])\s*se\b"
    rf"|如果|假如|要是|假设|万一|倘若|若是|{_LATER_CJK}"
)
# After the statement, in the rest of its clause: "I will cooperate if you cooperate".
HYPOTHETICAL_AFTER = (
    rf"{_CONCESSIVE}\b(?:if|unless|provided|as\s+long\s+as|as\s+soon\s+as|in\s+case|assuming|when|whenever"
    r"|after\s+(?:they|he|she|you|the\s+other|my\s+opponent)"
    rf"|once(?!\s+(?:more|again))|{_LATER}"
    r"|otherwise|in\s+theory|one-shot|single-shot|depending|si|a\s+menos\s+que|siempre\s+que|cuando"
    r"|en\s+caso\s+de|s['’]il|tant\s+que|[àa]\s+condition\s+que|sauf\s+si|quand|lorsque|wenn|falls|sofern"
    rf"|solange|sobald|{_PT_SE}|contanto\s+que|a\s+n[ãa]o\s+ser\s+que|caso|quando)\b"
    rf"|如果|只要|除非|假如|要是|的话|{_LATER_CJK}"
)
# A numbered or last round, in the statement's clause: the parser cannot tell whether it is this
# round, so such a statement counts but never revises ("Answer: C ... in round 10 I'll defect").
ROUND_BOUND = (
    r"\b(?:in|for)\s+round\s+\d+|\bin\s+the\s+(?:last|final)\s+round\b"
    r"|\b(?:en\s+la\s+ronda|au\s+tour|in\s+runde|na\s+rodada)\s+\d+|第\s*\d+\s*轮"
)
# Where that clause ends: a sentence end, or a conjunction that starts another clause.
CLAUSE_END = (
    r"[.;!?\n]|\b(?:and|but|so|because|since|though|although|while|given|y|pero|porque|ya\s+que|et|mais|car"
    r"|parce|puisque|und|aber|weil|denn|e|mas|pois)\b|因为|但是|但|所以|可是"
)
# Where a new clause starts inside a sentence, so a hypothetical before it no longer applies:
# "In a one-shot game I would defect, but this game is repeated, so I will cooperate."
CLAUSE_START = (
    r"(?<!if\s)\b(?:but|so|therefore|however|hence|thus|pero|as[ií]\s+que|por\s+lo\s+tanto|mais|donc|aber|deshalb"
    r"|daher|mas|ent[ãa]o|portanto)\b|但是|所以|因此|ので|ため|だから|から、|니까|으니|므로|그래서|इसलिए|لذلك"
)
# "They expect that I will cooperate": someone else's belief about me, not my decision.
EMBEDDED_BEFORE = (
    r"(?:[\"“‘]\s*|\b(?!i\b)[^\W\d_]+\s+(?:(?:might|may|will|would|could|probably|likely|surely|certainly|must"
    r"|all|both|clearly)\s+)*(?:think|thinks|expect|expects|assume|assumes|believe|believes|predict|predicts"
    r"|fear|fears|know|knows|suspect|suspects|guess|guesses|hope|hopes|say|says|said|claim|claims|anticipate"
    r"|anticipates|worry|worries|want|wants|wonder|wonders|wrote|write|writes|told\s+\w+|announced|promised)"
    r"(?:\s*[:,]\s*['\"“‘]?\s*|\s+['\"“‘]\s*|\s+(?:that\s+)?))$"
)
# A negation right before the move: "No coopero", "I choose not D", 我不背叛.
NEGATION_BEFORE = (
    r"(?:\b(?:not|no|never|nunca|jam[áa]s|jamais|nie|nicht|kein|n[ãa]o|ne|pas|non|niet|geen|не|لا|لن)\s+"
    r"|n['’]t\s+|不|没|别|绝不)$"
)
# A negation anywhere in a statement's clause before its move: "No voy a traicionar", "Eu não vou trair".
# A statement that is not read as a refusal (NEGATED_SUBJECTS) is then no decision. "No," as an
# interjection and the idioms "no doubt", "not only" are no negation of the move.
NEGATION_IN_CLAUSE = (
    r"(?:\b(?:not|never|no|nunca|jam[áa]s|jamais|nie|nicht|kein|n[ãa]o|ne|non|niet|geen|не|нет|никогда)\b"
    r"|n['’]t\b|\bلا\b|\bلن\b)(?!\s*[,.!:;—–-])(?!\s+(?:doubt|question|only|matter|longer\s+than|one\b))"
)
NEGATION_AFTER = r"^(?:\s+(?:nicht|pas|niet)\b|\s*(?:नहीं|ません|しない|하지\s*않|안\s))"
# German, French and Dutch put the negation after the verb and its adverbs: "Ich kooperiere diesmal nicht",
# "Je ne coopère pas cette fois", "Ik verraad ze deze ronde niet". Found in the rest of the statement's clause
# (a few words at most), it refuses the move and so chooses the other one. "Nicht nur" (not only) is no refusal.
LATE_NEGATION = r"^(?:\s+[^\W\d_]+){0,4}?\s+(?:nicht|pas|niet|nie)\b(?!\s+(?:nur|seulement|uniquement|alleen|slechts))"

# --- revisions: what lets a later decision replace an earlier one -------------------------------

# Written between the earlier decision and the later one ("Answer: C ... Actually, D").
REVISION_BEFORE = (
    r"\b(?:actually|on\s+second\s+thoughts?|on\s+(?:further\s+)?reflection|upon\s+reflection|wait|scratch\s+that"
    r"|correction|correcting|changed?\s+my\s+mind|change\s+of\s+heart|changing\s+my\s+(?:answer|mind|move)"
    r"|let\s+me\s+reconsider|reconsider(?:ing|ed)?|rethink(?:ing)?|or\s+rather|instead|but|however"
    r"|nevertheless|in\s+the\s+end|ultimately|all\s+things\s+considered|on\s+balance|in\s+conclusion|finally"
    r"|make\s+that|make\s+it|edit|no(?=\s*[,.!:;—–-]|\s+wait)|nope|just\s+kidding|kidding|jk"
    r"|sorry|oops|whoops|my\s+(?:bad|mistake)|typo|i\s+meant|by\s+mistake|mistakenly|in\s+error"
    r"|en\s+realidad|pens[áa]ndolo\s+bien|mejor\s+dicho|en\s+cambio|en\s+lugar\s+de\s+eso|espera|pero"
    r"|sin\s+embargo|al\s+final|finalmente|correcci[óo]n"
    r"|en\s+fait|[àa]\s+la\s+r[ée]flexion|r[ée]flexion\s+faite|tout\s+compte\s+fait|plut[ôo]t|au\s+lieu\s+de"
    r"|attends|mais|cependant|non(?=\s*[,.!:;])"
    r"|eigentlich|doch|stattdessen|lieber|warte|bei\s+n[äa]herer\s+[üu]berlegung|letztendlich|schlie[ßs]lich"
    r"|aber|jedoch|nein(?=\s*[,.!:;])|korrektur"
    r"|na\s+verdade|pensando\s+bem|em\s+vez\s+disso|ao\s+inv[ée]s|mas|por[ée]m|no\s+fim|afinal"
    r"|n[ãa]o(?=\s*[,.!:;]))\b"
    r"|其实|等等|不对|改为|改成|改变主意|改主意|重新考虑|再想想|还是|最终|最后|但是|不过|然而|算了"
)
# The markers of a change of mind, without the conjunctions and conclusions of REVISION_BEFORE:
# after the last decision, one of these followed by the other move means the reply may change
# its mind in words the parser does not know, so it is refused (see harness.players.model.parsing.policy, rule 6).
SECOND_THOUGHTS = (
    r"\b(?:actually|on\s+second\s+thoughts?|on\s+(?:further\s+)?reflection|upon\s+reflection|wait|scratch\s+that"
    r"|correction|correcting|changed?\s+my\s+mind|change\s+of\s+heart|chang(?:e|ing)\s+my\s+(?:answer|mind|move|choice)"
    r"|let\s+me\s+reconsider|reconsider(?:ing|ed)?|rethink(?:ing)?|or\s+rather|make\s+that|make\s+it|edit"
    r"|no(?=\s*[,.!:;—–-]|\s+wait)|nope|just\s+kidding|kidding"
    r"|sorry|oops|whoops|my\s+(?:bad|mistake)|typo|i\s+meant|by\s+mistake|mistakenly|in\s+error"
    r"|en\s+realidad|pens[áa]ndolo\s+bien|mejor\s+dicho|espera|correcci[óo]n|cambio\s+de\s+opini[óo]n"
    r"|en\s+fait|[àa]\s+la\s+r[ée]flexion|r[ée]flexion\s+faite|plut[ôo]t|attends|non(?=\s*[,.!:;])"
    r"|eigentlich|doch|stattdessen|warte|bei\s+n[äa]herer\s+[üu]berlegung|korrektur|nein(?=\s*[,.!:;])"
    r"|na\s+verdade|pensando\s+bem|em\s+vez\s+disso|n[ãa]o(?=\s*[,.!:;]))\b"
    r"|其实|等等|不对|改为|改成|改变主意|改主意|重新考虑|再想想"
)
# Someone else in the clause: "Actually, they will probably choose D" is no change of my mind.
OTHER_PLAYER = (
    r"\b(?:they|their|them|he|she|his|her|you|your|the\s+other(?!\s+way)|opponent|opponent['’]s|partner|ellos|el\s+otro"
    r"|ils|l['’]autre|sie|der\s+andere|eles|o\s+outro|l['’]altro|gli\s+altri|lui|lei|loro|de\s+ander[e]?|het\s+andere"
    r"|hij|zij|другой|он|она|они|соперник)\b|对方|他们|他|相手|상대|दूसरे|वह|الآخر|هو|هي"
)
# Written right after the later decision, in its clause ("so I will defect instead").
REVISION_AFTER = (
    r"\b(?:instead|rather\s+than|en\s+su\s+lugar|en\s+cambio|plut[ôo]t|[àa]\s+la\s+place|stattdessen"
    r"|em\s+vez\s+disso|ao\s+inv[ée]s)\b"
)

# --- a label alone in a sentence: what may surround it -----------------------------------------

# Interjections need punctuation after them ("No, cooperate." but never "No D").
_INTERJECTIONS = (
    r"no|nope|yes|ok|okay|hmm+|um+|uh+|alright|right|fine|wait|no\s+wait|anyway|well|so|sure"
    r"|just\s+kidding|kidding|jk|scratch\s+that|final|verdict|sorry|oops|whoops|my\s+bad|my\s+mistake|typo|nein|non|não|nao|sí|si|oui|ja|sim|bueno|bon|不|好吧|那么"
)
_CONNECTIVES = (
    r"or\s+rather|but\s+rather|actually|so|but|then|thus|therefore|hence|finally|ultimately|instead|overall|definitely|certainly|clearly|obviously"
    r"|probably|in\s+conclusion|in\s+the\s+end|on\s+second\s+thoughts?|on\s+reflection|all\s+things\s+considered"
    r"|going\s+with|i['’]m\s+going\s+with|i\s+go\s+with|make\s+(?:that|it)|my\s+pick\s+is|i['’]ve\s+changed\s+my\s+mind"
    r"|(?:i['’]m\s+|im\s+)?gonna\s+(?:be|go(?:\s+with)?|play|pick)|it['’]?s\s+gonna\s+be"
    r"|i\s+meant|i\s+mean|what\s+i\s+meant\s+(?:is|was)|i\s+have\s+changed\s+my\s+mind|chang(?:e|ing)\s+(?:my\s+)?(?:answer|move|choice|decision)\s+to|entonces"
    r"|por\s+lo\s+tanto|as[ií]\s+que|pues|donc|alors|also|daher|deshalb|dann|ent[ãa]o|portanto|logo|所以|因此"
)
LEAD = rf"(?:(?:{_INTERJECTIONS})\s*[,:;.!—–-]+\s*|(?:{_CONNECTIVES})(?:\s*[,:;.!—–-]+\s*|\s+))+[*_`'\"“]*"
TRAIL = (
    r"[*_`'\"”]*(?:\s*,?\s*(?:it\s+is|then|again|this\s+(?:round|time)|for\s+now|as\s+before|once\s+more|please"
    r"|here|now|from\s+me|for\s+me|instead|is\s+what\s+i\s+meant?))+"
)
# "C, not D" and "C rather than D" name one move: the other only to reject it.
REJECTED = r"(?:,?\s+(?:(?:definitely|certainly|surely)\s+)?(?:not|rather\s+than|instead\s+of|over))"
PRONOUN_PREFIX = rf"(?:(?:i|je|ich|yo|eu|me|io|ik|я)\s+|我|(?:option|opci[oó]n|op[cç][ãa]o|{_OPTION_WORDS})\s*)?"
# Chat slang ends a sentence as a full stop would: "defect lol they had it coming", "D tbh".
SLANG = r"lol|lmao|rofl|tbh|ngl|imo|imho|fr|smh|idc"
# A correction inside a sentence starts a new segment: "C, or rather D".
CORRECTION = r"(?:or|but)\s+rather\b|(?:sorry|oops|whoops)\b|my\s+(?:bad|mistake)\b"
# An explanation after a comma starts a new segment: "D, because they defected".
EXPLANATION = r"(?:because|since|as|given|so|to|but|and|the\s+one|which|porque|ya\s+que|parce|car|weil|da|pois|因为)\b"

# --- negated statements: in a game of two moves, refusing one chooses the other -----------------

# "I won't defect", "I will not be cooperating", "I refuse to defect", "Not D.", "No more cooperation".
NEGATED_SUBJECTS = (
    rf"i(?:\s+will\s+not|\s+won['’]t|['’]ll\s+not|\s+shall\s+not|\s+will\s+never|['’]ll\s+never|\s+am\s+not"
    rf"|['’]m\s+not|\s+do\s+not|\s+don['’]t|\s+refuse|\s+no\s+longer"
    rf"|(?:['’]m|\s+am)\s+(?:done|through|finished)(?:\s+with)?)(?:\s+{_EN_ADVERB})*"
    rf"(?:\s+(?:going\s+to|gonna|be|want\s+to|plan\s+to|intend\s+to|to|the\s+(?:one|first)\s+to))*"
    rf"(?:\s+(?:{_EN_VERB}|{_EN_GERUND}))?",
    r"(?:there['’]s|there\s+is|i\s+(?:have|see))\s+no\s+(?:reason|need)\s+to",
    r"i\s+have\s+no\s+(?:intention|plan|desire|wish)\s+(?:of|to)|(?:there['’]s\s+|there\s+is\s+)?no\s+way\s+i['’]m",
    # subjectless, at a sentence start only ("They are not going to cooperate" is theirs)
    r"(?:^|(?<=\n)|(?<=[.!?:]\s))(?:(?:definitely|certainly|absolutely)\s+)?(?:not|never)\s+(?:going\s+to|gonna)",
    r"(?:io\s+)?non(?:\s+(?:scelgo|voglio|intendo|ho\s+intenzione|penso))?(?:\s+di)?",
    r"ik\s+(?:ga|wil|kies)\s+niet(?:\s+voor)?(?:\s+te)?|ik\s+(?:kies|neem)\s+niet",
    r"я\s+не(?:\s+(?:буду|стану|выберу|хочу))?|не\s+буду|не",
    r"لن\s+(?:أختار|ألعب)|لن",
    r"(?:ja\s+)?nie(?:\s+(?:będę|wybieram|wybiorę|zamierzam))?",
    r"(?:yo\s+)?no\s+(?:voy\s+a|quiero|pienso|elijo|elegiré|vamos\s+a)|(?:eu\s+)?n[ãa]o\s+(?:vou|quero|escolho|irei)",
    r"ich\s+(?:werde|will|möchte|moechte)\s+(?:nicht|nie)(?:\s+mehr)?|ich\s+(?:wähle|waehle)\s+nicht",
    r"je\s+ne(?:\s+(?:vais|veux|choisis)\s+pas)?",
)
# Before a label alone: "Not D.", "Definitely not C.", "No more cooperation from me."
NEGATED_LEAD = (
    r"(?:(?:definitely|certainly|surely|absolutely|clearly|still)\s+)?(?:not|never|no\s+more|no|nicht|non|niet|не)"
    r"(?:\s+(?:going\s+to|gonna|planning\s+to|about\s+to))?\s+"
)

# --- hedges: an answer followed by doubt about it ---------------------------------------------------

# After the last decision, the other move with one of these is doubt, not an argument: "C. Although...
# D might be better. I'm not sure.", "D, but maybe C is wiser.", "Answer: D. Hmm, or perhaps C."
HEDGE_BEFORE = (
    r"\b(?:maybe|perhaps|possibly|or|then\s+again|alternatively|either|unless|might|may|could|open\s+to|tempted\s+by|forse|misschien|может\s+быть|или|o|ou|oder"
    r"|vielleicht|quizás|quizas|tal\s+vez|peut-être|talvez)\b(?:[\s,]+[^\W\d_]+){0,4}[\s,*_`'\"“(]*$"
)
HEDGE_AFTER = (
    r"[\s*_`'\")”]*(?:(?:might|could|may|would)\s+(?:also\s+)?(?:be|pay)\s+(?:(?:a\s+lot|much|even)\s+)?"
    r"(?:better|wiser|smarter|safer|preferable|more|right|correct|the\s+(?:better|smarter|wiser|safer|right))"
    r"|(?:is|seems|looks|sounds)\s+(?:(?:probably|maybe|perhaps|also|even)\s+)?(?:better|wiser|smarter|safer|preferable)"
    r"|(?:could|might|may)\s+(?:also\s+)?work"
    # "C. D is also fine though.", "I'll say D, but C is equally reasonable.", "C, though D works too."
    r"|(?:is|seems|looks|sounds|would\s+be)\s+(?:(?:also|equally|just\s+as|as|probably|maybe|perhaps|even|quite|honestly"
    r"|arguably|really|frankly)\s+)*"
    r"(?:fine|good|reasonable|valid|ok|okay|defensible|viable|acceptable|justified|justifiable|sensible|legit)"
    r"|works?\s+(?:too|as\s+well|also|just\s+as\s+well)|(?:also\s+)?makes?\s+(?:sense|a\s+case))"
)

# Doubt about one's own answer, written after it: "C, but honestly I'm not sure", "Answer: D. Not confident at
# all.", "Draft: C\nFinal: (undecided)", "I keep going back and forth". After the last decision, in a sentence
# that is not about the other player, it refuses the reply (see harness.players.model.parsing.doubt).
DOUBT = (
    r"\b(?:not\s+(?:\w+\s+)?(?:sure|certain|confident|decided|convinced)|unsure|uncertain|undecided|unclear"
    r"|can(?:no|['’])t\s+(?:\w+\s+)?(?:commit|decide|choose|make\s+up\s+my\s+mind)|no\s+idea"
    r"|(?:do\s+not|don['’]t)\s+(?:really\s+)?know|back\s+and\s+forth|torn|on\s+the\s+fence|either\s+way"
    r"|(?:with|like)\s+either|hard\s+to\s+(?:say|tell|decide)|who\s+knows|i\s+guess\s*\?|second-guess\w*"
    r"|tentative(?:ly)?|provisional(?:ly)?|subject\s+to\s+change|not\s+(?:100\s*%|final)|hard\s+call|coin\s+flip"
    r"|flip\s+a\s+coin|let\s+me\s+(?:reconsider|rethink|think(?:\s+(?:again|more|about\s+it|it\s+over))?\s*[.…!]*$)"
    r"|(?:need|have)\s+to\s+(?:think|reconsider)"
    # third pass: doubt in other words, a draft said to be right after all, a cycle of revisions left open
    r"|50\s*[-/ ]\s*50|could\s+be\s+wrong|then\s+again|don['’]t\s+(?:quote|hold)\s+me"
    r"|no\s+strong\s+(?:conviction|opinion)|(?:could|might|may)\s+(?:\w+\s+)?go\s+(?:the\s+other\s+way|both\s+ways)"
    r"|haven['’]t\s+(?:\w+\s+)?decided|low\s+confidence|equally\s+(?:plausible|likely|good|valid)|talked\s+out\s+of"
    r"|(?:might|may|could)\s+(?:well\s+)?(?:flip|switch|change|regret|revise|reconsider)|or\s+maybe\s+not|maybe\s+not\b|\bor\s+am\s+i\b"
    r"|\b(?:the\s+)?(?:draft|first\s+(?:one|answer)|original(?:\s+answer)?)\s+(?:was|is|might|may|could|looks|seems)\b"
    r"|\bno\s*(?:\.{2,}|…)\s*$|\b(?:wait|actually)\s*[—–-]+\s*$|twijfel"
    r"|\b(?:final|answer|decision|choice|revised|revision)\s*(?:[:=]|->|→|=>)\s*[?…]|\bor\s+not\b"
    # fourth pass: a marker left hanging at the end ("D. Actually, hold on.", "C... wait.", "F. Hmm."), a question
    # put to the answer ("J — or is it?"), an answer left pending ("D (pending)", "Final: TBD")
    r"|\b(?:wait|actually|hold\s+on|hang\s+on|one\s+sec(?:ond)?|hmm+|let\s+me\s+see)\b[\s.…!?,—–-]*$"
    r"|\bunless\s*(?:\.{2,}|…)|\bor\s+(?:is|was|should|do|will|would)\s+(?:it|i)\b"
    r"|\bnot\s+yet\b|\b(?:maybe|perhaps|possibly)\s*[.…!?]*\s*$|\s(?:to|into)\s*(?:\.{2,}|…)?\s*$|\bpending\b(?!\s+(?:their|the|his|her|your))|\btbd\b|to\s+be\s+(?:decided|determined|confirmed)"
    r"|no\s+s[ée]|no\s+estoy\s+segur[oa]|je\s+ne\s+sais\s+pas|pas\s+s[ûu]r|wei[ßs]\s+(?:es\s+)?nicht"
    r"|nicht\s+sicher|n[ãa]o\s+sei|n[ãa]o\s+tenho\s+certeza|non\s+(?:lo\s+)?so|non\s+sono\s+sicur[oa]"
    r"|weet\s+(?:het\s+)?niet|niet\s+zeker|не\s+знаю|не\s+уверен[аы]?|nie\s+wiem|nie\s+jestem\s+pew\w+"
    r"|bilmiyorum|emin\s+değilim|पता\s+नहीं|यकीन\s+नहीं|لا\s+أعرف|لست\s+متأكد)"
    r"|不确定|不知道|说不准|わからない|分からない|分かりません|わかりません|迷って|모르겠|확실하지\s*않"
)
# Before a statement in its clause, doubt makes it no decision: "I'm not sure I'll cooperate."
DOUBT_LEAD = (
    r"\b(?:not\s+(?:\w+\s+)?(?:sure|certain|convinced)|unsure|uncertain|(?:do\s+not|don['’]t)\s+know)"
    r"(?:\s+(?:that|whether|if))?\s*$"
)

# --- a label alone in informal replies: the words around it --------------------------------------

# A short reply that is one label with a few words around it ("ok C", "d, obviously", "D lol",
# "Frankly, Option F.") chooses that label, unless one of these words makes it something else: a
# condition, a question of who (the other player), the past, a doubt, a negation, or a comment
# about the move ("D is tempting"). Matched against each word around the label.
_NOT_ALONE = """if unless when whenever otherwise else or nor not no never maybe perhaps possibly either whether
    they them their theirs he she his her you your yours opponent opponent's other partner
    last previous before earlier prior ago past was were is are be been being
    would could might should may must will shall can chose played picked did had has have got
    won't don't doesn't didn't can't cannot isn't aren't wasn't shouldn't wouldn't couldn't
    refuse refusing done stop quit avoid enough tired anymore without against says said suggests thought told
    lost lose loses failed wins won bad wrong risky tempting pays gives means get gets seems seem looks sounds
    appears feels
    reject rejects rejecting rejected decline declining anything except besides nothing neither instead
    less least hardly barely scarcely un non anti
    vs versus than next later future then initially originally wanted thinking tentatively provisionally likely
    open considering consider tempted torn unsure
    nicht kein keine nie pas ne jamais non niet geen nooit не нет никогда nunca não nao mai
    se o ou oder y und et e ha hanno heeft hebben hat haben"""
# the past in the other languages: "Vorige ronde J." reports a round, it chooses nothing
_PAST_ABROAD = """vorige vorig scorso scorsa precedente letzte letzten letzter dernier dernière précédent anterior
    pasada pasado önceki geçen прошлый прошлом прошлого прошлой предыдущий предыдущем"""
# the other player in the other languages: "Onlar yine F." (they, again F) is theirs
_OTHERS_ABROAD = """onlar onlara onların onu rakip rakibim zij ze hun hij loro lui lei ellos ellas ils elles sie er eles
    elas"""
NOT_ALONE_WORDS = frozenset(_NOT_ALONE.split()) | frozenset(_PAST_ABROAD.split()) | frozenset(_OTHERS_ABROAD.split())
# Words that only place a label in this round, ask politely or name it an option, in the parser's languages: around a
# loose label they are blanked before its words are checked ("今回はJ。", "이번에도 J입니다.", "इस बार F.", "الخيار F
# هذه المرة.", "Вариант F, без сомнений.", "Optie J, zoals vorige ronde."). None of them negates, conditions, names
# another player or another round's move; any other word of these languages still keeps a label from being read.
FILLERS = (
    r"今回(?:は|も)?|今度は|このラウンド(?:では|は|も)?|私は|僕は|俺は|で(?:お願いします|いきます|行きます|す)|です|にします|にする"
    r"|で(?=\s*[.!]?\s*$)"
    r"|이번\s*라운드(?:에서?도?|는|도)?|이번에(?:도|는)|이번엔|이번|저는|나는|입니다|이에요|예요|(?<=\w)요"
    r"|इस\s+(?:राउंड|बार|दौर)(?:\s+(?:में|भी))*|फिर\s+से|मैं|विकल्प|है|ही|भी"
    r"|(?:في\s+)?هذه\s+(?:المرة|الجولة)|مرة\s+أخرى|الخيار|كما\s+في\s+(?:الجولة\s+السابقة|السابق)"
    r"|вариант|опция|в\s+этом\s+раунде|в\s+этот\s+раз|снова|опять|как\s+и\s+раньше|без\s+сомнений?|конечно"
    r"|\b(?:optie|deze\s+(?:ronde|keer)|weer|opnieuw|zoals\s+vorige\s+(?:ronde|keer)|zonder\s+twijfel"
    r"|opzione|questo\s+turno|questa\s+volta|ancora|di\s+nuovo|come\s+prima|senza\s+dubbio"
    r"|bu\s+tur(?:da)?|bu\s+sefer|yine|tekrar|seçene[kğ]i?|elbette|kesinlikle)\b"
)
IDIOMS = re.compile(r"\bwhy\s+not\b|\bno\s+doubt\b|\bno\s+question\b", re.IGNORECASE)  # not negations
LEAD_WORDS_MAX = 4
TAIL_WORDS_MAX = 3

# --- key-value lines of any key: "Selected: D", "Draft answer: C", "This round: me D", "=> D" -----

# A key that names the other player, the past, or a move that is not the one chosen ("Opponent: D",
# "Last round: C", "Backup: D", "Expected: D") holds no decision of mine.
FOREIGN_KEY = (
    r"^(?:the\s+|my\s+|our\s+)?(?:other|opponent|opp|them|they|their|his|her|partner|you|your|last|previous(?:ly)?|prev|prior"
    r"|so\s+far|recap|until\s+now|up\s+to\s+now|to\s+date"
    r"|earlier|history|past|before|score|scores|points|payoffs?|if|when|unless|expected|predicted|prediction"
    r"|backup|alternative|fallback|plan|next|later|future|options|note|reason|why|because|question"
    r"|их|他|对方|相手|상대)\b"
    r"|\b(?:chose|played|picked|did|was|were|got|predict|expect|would|might|could|if|opponent|other\s+player)\b"
)
FOREIGN_JSON_KEY = (
    r"(?:^|_)(?:other|opponent|opp|their|them|partner|last|previous|prev|prior|history|past|expected|predicted"
    r"|prediction|backup|alternative|fallback|options|if|reason|reasoning|explanation|strategy|confidence|note|notes"
    r"|comment|comments|why|rationale|thoughts|analysis|justification)(?:_|$)"
)
# Up to this many words make a key; a longer "key" is a sentence.
KEY_WORDS_MAX = 6
# The reply's closing phrase before its label may be longer: "For the sake of our long partnership here: J".
CLOSING_KEY_WORDS_MAX = 10
