import pytest

from memoryapp.attribution import clauses, lost_relation, misattribution, sentences
from memoryapp.parsed import parse_turn
from memoryapp.write.gate import gate_facts


def _verdict(turn: str, fact: str) -> str | None:
    """The gate's attribution step on its own, against the clause that supports the fact best."""
    _, kept, rejected = gate_facts(parse_turn(turn), [fact])
    return rejected[0].rejected_because if rejected else None


@pytest.mark.parametrize(
    ("turn", "fact", "reason"),
    [
        ("My colleague Dr. Alvarez prefers tea.", "The user's name is Dr. Alvarez.", "gives the name"),
        ("I'm meeting my colleague Dr. Alvarez tomorrow.", "The user's name is Dr. Alvarez.", "gives the name"),
        ("My sister lives in Berlin.", "The user lives in Berlin.", "about someone else"),
        ("My brother lives in Rome and is a lawyer.", "The user is a lawyer.", "about someone else"),
        ("Dana works as a nurse at Rush.", "The user works as a nurse at Rush.", "about someone else"),
        ("My CEO loves spreadsheets.", "The user is a CEO.", "about someone else"),
        ("If I were rich I'd live in Monaco.", "The user lives in Monaco.", "hypothetical"),
        ("Tom's wife just opened a bakery in Bristol.", "The user opened a bakery in Bristol.", "about someone else"),
        ("the kids just flooded the bathroom lol", "The user flooded the bathroom.", "about someone else"),
        ("As the saying goes, 'a watched pot never boils'.", "The user's pot never boils.", "quoted"),
        ("As my old teacher used to say, 'measure twice, cut once'.", "The user has an old teacher.", "quoted"),
        ("Like my grandma used to say, waste not, want not.", "The user has a grandma.", "quoted"),
        (
            "Gus, my tortoise, turned 40 this year, he's older than me lol",
            "The user is older than Gus.",
            "not the other way round",
        ),
        ("Mi cuñado vive en Rosario.", "The user lives in Rosario.", "about someone else"),
        ("Мой муж Игорь — хирург.", "The user is a surgeon.", "about someone else"),
        ("Wow, you're so dedicated to your studio!", "The user is dedicated to their studio.", "speaks to"),
        ("Your kids are lucky to have you.", "The user has kids.", "speaks to"),
        ("How did you get into running marathons?", "The user runs marathons.", "speaks to"),
        (
            "Congrats! You both looked great on your wedding day.",
            "The user looked great on their wedding day.",
            "speaks to",
        ),
    ],
)
def test_facts_about_someone_else_or_imagined_are_rejected(turn, fact, reason):
    assert reason in (_verdict(turn, fact) or "")


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Call me Priya, and I'm always in UTC.", "The user's name is Priya."),
        ("Call me Dr. Alvarez.", "The user's name is Dr. Alvarez."),
        ("My wife is named Sara.", "The user's wife is named Sara."),
        ("I have two kids named Ana and Rui.", "The user has two kids named Ana and Rui."),
        ("My sister and I live in Berlin.", "The user lives in Berlin."),
        ("Me and my dad have been restoring a 1972 Beetle for years.", "The user is restoring a 1972 Beetle."),
        ("me & Dana just bought a flat in Leeds", "The user bought a flat in Leeds."),
        ("My friends call me Priya.", "The user's name is Priya."),
        ("My favourite food is sushi.", "The user's favourite food is sushi."),
        ("Can you help me plan my trip to Japan next month?", "The user is planning a trip to Japan."),
        ("You know, I just started volunteering at a shelter.", "The user volunteers at a shelter."),
        ("Your dog is adorable. I have a golden retriever named Max.", "The user has a golden retriever named Max."),
        ("Your answers are too long.", "The user prefers short answers."),
        ("As I said, I live in Leeds.", "The user lives in Leeds."),
        ("I'm two years older than my brother Tom.", "The user is older than their brother Tom."),
    ],
)
def test_the_users_own_statements_pass(turn, fact):
    assert _verdict(turn, fact) is None


def test_sentences_are_not_cut_after_a_title():
    assert sentences("Call me Dr. Alvarez. I live in Lisbon.") == ["Call me Dr. Alvarez.", "I live in Lisbon."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我住在北京。我是医生。", ["我住在北京。", "我是医生。"]),  # no space after a full-width stop
        ("東京に住んでいます！猫が好きです？", ["東京に住んでいます！", "猫が好きです？"]),
        ("I'm vegan; my wife isn't.", ["I'm vegan;", "my wife isn't."]),
        ("Quick question\nWhat is a monad?", ["Quick question", "What is a monad?"]),
        ("Is it safe? I use Linux.", ["Is it safe?", "I use Linux."]),
        ("I met Mr. Smith vs. Jones e.g. today", ["I met Mr. Smith vs. Jones e.g. today"]),
    ],
)
def test_one_splitter_serves_every_language_and_every_rule(text, expected):
    # The gate's clauses and the rules on questions (memoryapp.grammar.turns) read the same sentences.
    assert sentences(text) == expected


def test_a_clause_without_a_subject_belongs_to_the_previous_one():
    parts = clauses("My brother lives in Rome and is a lawyer, but I live in Porto.")
    assert [(c.text, c.subject) for c in parts] == [
        ("My brother lives in Rome", "other"),
        ("is a lawyer", "other"),
        ("but I live in Porto", "user"),
    ]


@pytest.mark.parametrize(
    ("turn", "parts"),
    [
        ("Sou desenvolvedor e moro em Belo Horizonte.", ["Sou desenvolvedor", "moro em Belo Horizonte"]),
        ("Я живу в Казани и работаю переводчиком.", ["Я живу в Казани", "работаю переводчиком"]),
        ("Ich heiße Lea und wohne in Leipzig.", ["Ich heiße Lea", "wohne in Leipzig"]),
        # "en" is "and" in Dutch but "in" in Spanish; Polish "i" is English "I"
        ("Vivo en Madrid desde 2019.", ["Vivo en Madrid desde 2019"]),
        ("Mam psa i kota.", ["Mam psa i kota"]),
        ("so i guess I live in Leeds now", ["so i guess I live in Leeds now"]),
    ],
)
def test_clauses_split_at_and_in_the_languages_the_encoder_reads(turn, parts):
    assert [c.text for c in clauses(turn)] == parts


def test_a_clause_about_the_person_spoken_to_is_the_listeners():
    parts = clauses("Thanks, Jon! You were brave, I was not. Did you ever go back?")
    assert [(c.text, c.subject) for c in parts] == [
        ("Thanks", "unknown"),
        ("Jon", "unknown"),
        ("You were brave", "listener"),
        ("I was not", "user"),
        ("Did you ever go back", "listener"),
    ]


def test_misattribution_names_the_reason():
    (clause,) = clauses("My team lead is vegan.")
    assert misattribution("The user is vegan.", clause, "My team lead is vegan.") == (
        "the supporting clause is about someone else"
    )


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Yeah, I'm lucky to have them. Who supports you, Mel?", "The user's name is Mel."),
        ("Hey Jon! Great to hear from you. Been having some tough times lately.", "The user is named Jon."),
        ("Thanks, Jarvis! That helped.", "The user's name is Jarvis."),
        ("Mel, my friend, how are you?", "The user's name is Mel."),
    ],
)
def test_the_name_of_the_one_spoken_to_is_not_the_users(turn, fact):
    (clause, *_) = clauses(turn)
    assert "the name is the listener's" in (misattribution(fact, clause, turn) or "")


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Hi I'm Noor, nice to meet you.", "The user's name is Noor."),
        ("Thanks, Mel! Call me Sam from now on.", "The user's name is Sam."),
        ("I work at Google, Mel.", "The user works at Google."),
        ("Oscar, my guinea pig. He's been great.", "The user's guinea pig is named Oscar."),  # not spoken to
    ],
)
def test_a_name_the_user_gives_themselves_beside_a_greeting_is_theirs(turn, fact):
    (clause, *_) = clauses(turn)
    assert misattribution(fact, clause, turn) is None


def test_other_languages_pass_the_attribution_step_unchanged():
    turn = "Je m'appelle Lucía et j'habite à Lyon."
    assert all(misattribution("The user lives in Lyon.", clause, turn) is None for clause in clauses(turn))


@pytest.mark.parametrize(
    ("turn", "subjects"),
    [
        ("Mi hermana vive en Roma y yo en Nápoles.", [("other", "sister"), ("unknown", None)]),
        ("Sono infermiera e mio marito è medico.", [("unknown", None), ("other", "husband")]),
        ("上司はゴルフが大好きです。", [("other", "boss")]),
        ("Annem Ankara'da yaşıyor.", [("other", "mother")]),
        ("Si j'étais riche, j'achèterais un bateau.", [("hypothetical", None), ("hypothetical", None)]),
        ("Vivo en Madrid con mi novia.", [("unknown", None)]),
        ("If you win the lottery, I'll buy a house in Tuscany.", [("hypothetical", None), ("hypothetical", None)]),
        ("I'd love to visit Japan, I live in Korea.", [("hypothetical", None), ("user", None)]),
        ("Colleagues go to the gym every day.", [("other", "colleagues")]),
        ("Teacher by trade, I live in Leeds.", [("unknown", None), ("user", None)]),
    ],
)
def test_clauses_led_by_a_relation_or_an_if_are_not_the_users(turn, subjects):
    assert [(c.subject, c.relation) for c in clauses(turn)] == subjects


def test_a_family_fact_in_another_language_is_about_the_relation_and_stays():
    (clause,) = clauses("Mi hermana se llama Ana.")
    assert misattribution("The user's sister is named Ana.", clause, "Mi hermana se llama Ana.") is None


@pytest.mark.parametrize(
    ("turn", "reading", "lost"),
    [
        ("Ablam Berlin'de doktor, yarın onu ziyaret ediyorum.", "I went to the doctor in Berlin yesterday.", "sister"),
        ("Mi jefe trabaja en Quito.", "My manager works in Quito.", None),
        ("Mi madre vive en Lima y yo en Cusco.", "My mom lives in Lima and I live in Cusco.", None),
        ("Mein Chef trinkt nur Espresso.", "I only drink espresso.", "boss"),
        ("Vivo en Nápoles.", "I live in Naples.", None),
    ],
)
def test_a_reading_must_keep_the_relation_a_clause_is_about(turn, reading, lost):
    assert lost_relation(turn, reading) == lost
