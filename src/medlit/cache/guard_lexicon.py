"""The guard's vocabulary: general medical knowledge, not words picked from benchmark pairs.

Stop words, drug names with their lay/brand synonyms and INN stems, clinical findings,
populations, antonyms, effect directions, treatment kinds and question intents, used by
:mod:`medlit.cache.guard`. Kept apart so the guard's logic reads on its own.
"""

from __future__ import annotations

import re

# --- lexicon -------------------------------------------------------------------------------

_STOP = frozenset(
    """a about above after again against ago all almost also am an and any anyone anything are
    around as at be because been before being below between both but by can cannot could did
    do does doing done down during each even ever every few for from further get gets
    getting got had has have having he her here hers herself him himself his how i if in
    into is it its itself just know let like ll lot lots m me might more most much must my
    myself need needs no nor not now of off on once one only or other our ours out over own
    please pls plz quite re really s same she should so some someone something still such t
    than thank thanks that the their them then there these they thing things think this
    those though through thus to too under until up upon us ve very was way we were what
    whats when where whether which while who whom whose why will with within without would
    yet you your yours yourself doc doctor doctors dr hi hello hey tell say said wondering
    wonder want wanted wants help tried try trying go going make made take took taking use
    used using see seen since ok okay yes well sure anybody someone's today yesterday
    tomorrow recently lately currently now already""".split()  # noqa: SIM905
)

# Lay / brand -> canonical name. Only words that change which drug is meant.
_SYNONYMS: dict[str, str] = {
    "tylenol": "acetaminophen",
    "paracetamol": "acetaminophen",
    "apap": "acetaminophen",
    "advil": "ibuprofen",
    "motrin": "ibuprofen",
    "nurofen": "ibuprofen",
    "aleve": "naproxen",
    "naprosyn": "naproxen",
    "asa": "aspirin",
    "zyrtec": "cetirizine",
    "claritin": "loratadine",
    "allegra": "fexofenadine",
    "benadryl": "diphenhydramine",
    "prilosec": "omeprazole",
    "nexium": "esomeprazole",
    "zantac": "ranitidine",
    "pepcid": "famotidine",
    "xanax": "alprazolam",
    "valium": "diazepam",
    "ativan": "lorazepam",
    "klonopin": "clonazepam",
    "zoloft": "sertraline",
    "prozac": "fluoxetine",
    "lexapro": "escitalopram",
    "celexa": "citalopram",
    "paxil": "paroxetine",
    "wellbutrin": "bupropion",
    "adderall": "amphetamine",
    "ritalin": "methylphenidate",
    "coumadin": "warfarin",
    "lipitor": "atorvastatin",
    "glucophage": "metformin",
    "synthroid": "levothyroxine",
    "lasix": "furosemide",
    "augmentin": "amoxicillin",
    "zithromax": "azithromycin",
    "zpak": "azithromycin",
    "cipro": "ciprofloxacin",
    "levaquin": "levofloxacin",
    "keflex": "cephalexin",
    "bactrim": "sulfamethoxazole",
    "flagyl": "metronidazole",
    "diflucan": "fluconazole",
    "valtrex": "valacyclovir",
    "prednisone": "prednisone",
    "medrol": "methylprednisolone",
    "accutane": "isotretinoin",
    "mirena": "levonorgestrel",
    "plan-b": "levonorgestrel",
    "viagra": "sildenafil",
    "cialis": "tadalafil",
    "lantus": "insulin",
    "lantis": "insulin",
    "vicodin": "hydrocodone",
    "norco": "hydrocodone",
    "percocet": "oxycodone",
    "oxycontin": "oxycodone",
    "ultram": "tramadol",
    "neurontin": "gabapentin",
    "lyrica": "pregabalin",
    "flonase": "fluticasone",
    "imitrex": "sumatriptan",
    "clomid": "clomiphene",
    "depo": "medroxyprogesterone",
    "provera": "medroxyprogesterone",
    "tums": "antacid",
    "alcohol": "alcohol",
    "booze": "alcohol",
    "beer": "alcohol",
    "wine": "alcohol",
    "marijuana": "cannabis",
    "thc": "cannabis",
    "cbd": "cannabidiol",
    "cigarette": "tobacco",
    "cigarettes": "tobacco",
    "smoking": "tobacco",
    "nicotine": "tobacco",
    "coffee": "caffeine",
}

# Common drugs and substances that no INN stem catches.
_DRUGS = frozenset(
    """acetaminophen ibuprofen naproxen aspirin diclofenac celecoxib meloxicam cetirizine
    loratadine fexofenadine diphenhydramine omeprazole esomeprazole pantoprazole
    lansoprazole ranitidine famotidine alprazolam diazepam lorazepam clonazepam sertraline
    fluoxetine escitalopram citalopram paroxetine bupropion venlafaxine duloxetine trazodone
    amitriptyline amphetamine methylphenidate warfarin heparin metformin insulin
    levothyroxine furosemide amoxicillin penicillin azithromycin doxycycline ciprofloxacin
    levofloxacin cephalexin cefdinir sulfamethoxazole metronidazole fluconazole clotrimazole
    miconazole acyclovir valacyclovir prednisone prednisolone methylprednisolone
    hydrocortisone cortisone dexamethasone isotretinoin tretinoin levonorgestrel estrogen
    progesterone testosterone sildenafil tadalafil hydrocodone oxycodone morphine codeine
    fentanyl tramadol methadone buprenorphine suboxone naloxone gabapentin pregabalin
    lithium fluticasone albuterol sumatriptan clomiphene medroxyprogesterone melatonin
    niacin biotin caffeine alcohol cannabis cannabidiol tobacco cocaine heroin lsd mdma
    ketamine antacid laxative antibiotic antibiotics antihistamine antidepressant
    antipsychotic steroid steroids opioid opioids benzodiazepine nsaid nsaids statin statins
    vaccine vitamin iron zinc magnesium calcium potassium botox chemotherapy radiation""".split()  # noqa: SIM905
)

# INN stems: a word ending so is almost surely a drug name.
_DRUG_STEM = re.compile(
    r"(?:pril|sartan|olol|statin|mab|nib|azole|cillin|mycin|floxacin|cycline|prazole|tidine|"
    r"dipine|azepam|azolam|triptan|ciclovir|cyclovir|vudine|lukast|gliptin|gliflozin|glitazone|"
    r"parin|xaban|gatran|semide|thiazide|profen|coxib|oxetine|aline|afil|tropin|steron|estradiol|"
    r"dronate|caine|codone|morphone|phylline|buterol|sonide|metasone|olone|isone)$"
)


# --- question intent -------------------------------------------------------------------------

# What a question asks for. Patterns run on the question sentences only (see _asking_part), so
# "I was treated for X last year. Why do I still ...?" asks for a cause, not a treatment.
_INTENT_PATTERNS: dict[str, str] = {
    "cause": r"\bcaus|\bwhy\b|\breasons?\b|\bdue to\b|because of|\btrigger"
    r"|\bresult(?:s|ing)? (?:from|in)\b"
    r"|\blead(?:s|ing)? to\b|what (?:could|can|might|would) (?:it|this|that|these|they) be"
    r"|what(?: is|'s) (?:wrong|happening|going on)|\brelated\b|\bconnect",
    "treatment": r"\btreat|\bcur(?:e|es|ed|ing|able)\b|\bremed|\bmedications?\b|\bmedicines?\b"
    r"|\bmeds\b|\btherap|get rid|\brelie[fv]|\bmanag|\bheal\b|\bfix\b|\bease\b|\blessen|\bsoothe"
    r"|what (?:should|can|could|do|would) (?:i|we|you|he|she|one) do|what to do"
    r"|how (?:to|do i|can i) (?:stop|deal|cope)"
    r"|\brecommend|\bsuggest|\badvi[cs]e|\btips\b|\bsurger|\bsurgical|\bprocedure"
    r"|what can be done|\boptions?\b|\bimprov|\breverse\b|\bmeasures\b",
    "symptoms": r"\bsymptoms?\b|\bsigns?\b|\bfeel like\b|\bpresent",
    "diagnosis": r"\bdiagnos|\btests?\b|\btesting\b|\bdetect|\bscan\b|\bx-?ray|\bmri\b|\bconfirm"
    r"|how (?:do|can|would|will|could) (?:i|you|we|one|doctors?)"
    r" (?:know|tell|check|find out|be sure)"
    r"|\bdifferentiat|\bdistinguish|\bcould (?:it|this|i) (?:be|have)\b|\bdo i have\b|\bam i\b",
    "prognosis": r"\bchances?\b|\blikel(?:y|ihood)\b|\bsurviv|\bprognos|life expectancy|\bgo away"
    r"|\brecover|\bpermanent|\bfatal|\brecur|\bheal on|\bresolve|\bprogress|\boutcome",
    "severity": r"\bnormal\b|\bserious|\bdanger|\bworr(?:y|ied|ying)|\bconcern|\bemergency|\ber\b"
    r"|see a doctor|\bharm(?:ful|less)?\b|\bbad\b|\bok(?:ay)?\b|\bfine\b",
    "safety": r"\bsafe|\bcan (?:i|we|you|he|she|one) (?:take|use|drink|eat|give|have|do|mix)"
    r"|\bshould (?:i|we|he|she) (?:take|use|drink|eat|give|stop)|\ballowed\b",
    "side_effects": r"side[- ]?effects?|\badverse|\breactions?\b",
    "dosage": r"\bdos(?:e|es|age|ing)\b|how (?:much|many)\b|\bamount\b|\bhow often|\bper day"
    r"|\brequirement|\bmaximum|\bminimum",
    "timing": r"how long|how soon|how quickly|\bwhen (?:can|should|do|does|will|is|would)"
    r"|\bwhat age\b|\bhow early|\bhow late",
    "prevention": r"\bprevent|\bavoid|\breduce (?:the |my )?risk|\bprotect",
    "consequence": r"risk factor for\s*\??\s*$|\bcomplications?\b|\baffects?\b(?! by)|\bimpact"
    r"|\bwhat (?:does|can|will) (?:it|this|that|[a-z]+) do to\b",
    "risk": r"\brisk|\bprone\b|\bsusceptib|\bpredispos|\bcontagious|\bspread|\bhereditary"
    r"|\bgenetic",
    "definition": r"\bwhat (?:is|are|'s) (?:a |an |the )?[a-z]+(?: [a-z]+)?\s*\??$"
    r"|\bwhat does (?:it|this|that|[a-z ]+) mean|\bmean(?:s|ing)?\b|\bdefin|\bexplain"
    r"|\bmore (?:details|information|info)\b|\btell me about",
    "alternative": r"\balternatives?\b|\binstead\b|\bother than\b|\bapart from\b|\bbesides\b"
    r"|\baside from\b|\bexcept\b|\bsubstitut|\breplace",
    "interaction": r"\binteract|\btogether\b|\bcombin|\bmix",
    "efficacy": r"\bwork(?:s|ing)?\b|\beffective|\bhelp(?:s|ful)?\b|\bgood for\b|\bbenefi|\buseful",
}
_INTENTS = {name: re.compile(pat) for name, pat in _INTENT_PATTERNS.items()}

# Pairs of intents one answer usually serves both of ("how do I know if I have X" ~ "what are
# the symptoms of X"). Everything else is a different question.
_COMPATIBLE = {
    frozenset(p)
    for p in [
        ("symptoms", "diagnosis"),
        ("treatment", "efficacy"),
        ("severity", "prognosis"),
        ("severity", "diagnosis"),
        ("severity", "safety"),
        ("safety", "side_effects"),
        ("safety", "interaction"),
        ("safety", "efficacy"),
        ("cause", "diagnosis"),
        ("side_effects", "cause"),
        ("dosage", "safety"),
        ("prevention", "treatment"),
    ]
}

# Kinds of treatment a question asks about: "home remedies for X" and "medications for X" have
# different answers even though both ask for a treatment.
_MODALITY_PATTERNS = {
    "home or natural remedies": r"\bhome\b|\bnatural|\bherbal|\bhomeopath|\bacupunct|\bremed",
    "medication": r"\bmedications?\b|\bmedicines?\b|\bmeds\b|\bdrugs?\b|\bpills?\b|\bprescri"
    r"|\botc\b|over the counter|\bantibiotics?\b|\bcreams?\b|\bointment",
    "surgery": r"\bsurg|\boperat|\bprocedure|\btransplant|\bimplant|\blipo",
    "exercise": r"\bexercis|\bworkouts?\b|\bstretch|\bphysio|physical therapy",
    "diet": r"\bfoods?\b|\bdiet\b|\bsupplements?\b|\bvitamins?\b|\btea\b|\bjuice",
}
_MODALITIES = {k: re.compile(v) for k, v in _MODALITY_PATTERNS.items()}
# "Apart from zyrtec, what else ...": asks about everything except what the other question asks.
_EXCLUDES = re.compile(
    r"\bapart from\b|\bother than\b|\bbesides\b|\baside from\b|\bexcept\b|\binstead of\b"
    r"|\balternatives?\b|\bwhat other\b|\bany other\b|\banything else\b"
)
# Clinical states whose polarity changes the answer ("not pregnant" / "pregnant"). Negation of
# other words is too often a rewording ("can't walk" / "unable to walk") to refuse on.
_FINDINGS = frozenset(
    """pregnant pregnancy fever pain painful bleeding blood period symptom diabetic diabetes
    allergic allergy infection infected vaccinated vaccine sexually contagious cancer
    cancerous malignant benign smoker tobacco alcohol drinking breastfeeding nursing cough
    rash itch itchy swelling swollen discharge vomiting nausea diarrhea headache dizzy
    dizziness numb numbness menopause surgery insurance prescription positive negative""".split()  # noqa: SIM905
)

# Words whose opposite in the other question flips the answer (test results, direction, side).
_ANTONYMS = [
    ("positive", "negative"),
    ("high", "low"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("benign", "malignant"),
    ("acute", "chronic"),
    ("upper", "lower"),
    ("before", "after"),
    ("first", "second"),
    ("hyperthyroidism", "hypothyroidism"),
    ("hypertension", "hypotension"),
    ("hyperglycemia", "hypoglycemia"),
    ("constipation", "diarrhea"),
    ("gain", "loss"),
    ("overdose", "underdose"),
]

_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
_QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|which|who|can|could|is|are|am|do|does|did|should|would|will"
    r"|may|might|any|has|have)\b"
)
