"""The offline extractor reads the grammar of a turn: facts said in passing, in the user's words."""

from datetime import UTC, date, datetime

import pytest

from memoryapp import grammar
from memoryapp.parsed import parse_turn
from memoryapp.write.extract import extract_facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("I'm training for the Boston marathon in April.", ["The user is training for the Boston marathon in April."]),
        ("I drive a 2019 Subaru Outback.", ["The user drives a 2019 Subaru Outback."]),
        ("I'm left-handed", ["The user is left-handed."]),
        ("My son Mateo just turned seven.", ["The user's son Mateo is seven years old."]),
        ("I use Neovim and write mostly Rust.", ["The user uses Neovim.", "The user writes mostly Rust."]),
        ("I moved from Berlin to Lisbon last spring.", ["The user lives in Lisbon."]),
        ("Correction: I'm based in Singapore now, not Shanghai.", ["The user is based in Singapore."]),
        ("Last Friday I went to a council meeting.", ["The user went to a council meeting last Friday."]),
        ("Hi I'm Noor, nice to meet you.", ["The user's name is Noor."]),
        ("Hi there! I work as a nurse in Leeds.", ["The user works as a nurse.", "The user works in Leeds."]),
        # a home shared is where and with whom, each a fact of its own
        ("I live in Lyon with my partner.", ["The user lives in Lyon.", "The user lives with their partner."]),
        (
            "I live with my wife and two kids in Leeds.",
            ["The user lives in Leeds.", "The user lives with their wife and two kids."],
        ),
        ("However, I finally passed my driving test!", ["The user finally passed their driving test."]),
        ("Call me Priya, and I'm always in UTC.", ["The user's name is Priya.", "The user's timezone is UTC."]),
        ("My name's David.", ["The user's name is David."]),
        (
            "Please always answer me in Spanish from now on.",
            ["The user wants the assistant to always answer the user in Spanish."],
        ),
        ("Please keep your answers short from now on.", ["The user wants the assistant to keep its answers short."]),
        (
            "From now on, please answer in British English.",
            ["The user wants the assistant to answer in British English."],
        ),
        ("Correct my mistakes in future, please.", ["The user wants the assistant to correct the user's mistakes."]),
        ("Please don't use bullet points", ["The user wants the assistant not to use bullet points."]),
        (
            "Got promoted to team lead in October, still getting used to it.",
            ["The user got promoted to team lead in October."],
        ),
        (
            "I'm a landscape photographer, mostly shooting on a Nikon Z6.",
            ["The user is a landscape photographer.", "The user mostly shoots on a Nikon Z6."],
        ),
        (
            "I own a 2014 Brompton folding bike that I take on the train.",
            ["The user owns a 2014 Brompton folding bike."],
        ),
        ("I don't drink alcohol, so please skip the wine pairings.", ["The user does not drink alcohol."]),
        ("My partner, Theo, is 34 and works in theatre lighting.", ["The user's partner Theo is 34 years old."]),
        # the name of the person spoken to is not part of the fact; a time set off the same way is
        ("Wow, Nate, I'm on fire!", ["The user is on fire."]),
        ("Yeah Maria, I'm hoping to get into local politics.", ["The user is hoping to get into local politics."]),
        ("Woah Joanna, I won a chess tournament!", ["The user won a chess tournament."]),
        ("Well done, Joanna!", []),
        ("I don't drink coffee, mum.", ["The user does not drink coffee."]),
        ("Honestly, mate, I'm vegan.", ["The user is vegan."]),
        # what a fact leads to, after "so", is no part of it
        ("As I said, I am vegan, so no cheese.", ["The user is vegan."]),
        # the word that led a clause in ("why I ...", "what I ...") does not trail after it
        ("Yeah, that's why I love volunteering!", ["The user loves volunteering."]),
        ("It was awesome being out there, doing what I love.", []),
        # what the two speakers are to each other, and what names nothing, is no fact about the user
        ("We make a great team!", []),
        ("We have each other's backs through good times and bad.", []),
        ("I did something new last weekend.", []),
        ("We moved to Lisbon in 2019.", ["The user lives in Lisbon."]),
        ("We haven't talked in a few days.", []),
        ("We all have unique paths.", []),
        ("We both love hiking in the Alps.", ["The user loves hiking in the Alps."]),
        ("We speak Portuguese at home.", ["The user speaks Portuguese at home."]),
        ("Hey Mel, what's up? Been a busy week since we talked.", []),
        ("Been only to Rome once.", ["The user has been only to Rome once."]),
        ("Wow, that pic reminds me how much I love performing.", ["The user loves performing."]),
        # a feeling of the moment, whatever time words follow it
        ("I'm so nervous and excited right now.", []),
        ("I am really busy right now with the move.", []),
        ("They always support me, even when I make mistakes.", ["The user makes mistakes."]),
        ("I have two cats or so.", ["The user has two cats."]),
        # a belief is not a fact, though what it is about may be
        ("I'm sure with hard work I can open my own studio.", ["The user can open their own studio."]),
        # encouragement is said in the imperative too, and is no instruction on how to answer
        ("You got the skills. Don't give up, buddy!", []),
        ("Never give up on your dreams!", []),
        ("Don't be afraid to take risks.", []),
        ("Don't forget to rest, the wait can be hard.", []),
        ("Go for it! Don't let anything stop you.", []),
        ("Please don't give me long answers.", ["The user wants the assistant not to give the user long answers."]),
        ("It was much easier when I took French in high school.", ["The user took French in high school."]),
        ("Absolutely! I just like playing chess for fun!  Any tips?", ["The user just likes playing chess for fun."]),
        ("Last Friday, I went to a council meeting.", ["The user went to a council meeting last Friday."]),
        (
            'I\'m reading a novel called "The Name of the Wind".',
            ["The user is reading a novel called The Name of the Wind."],
        ),
        ("On another note, I just adopted a beagle!", ["The user just adopted a beagle."]),
        # what is liked may be an activity, a verb of its own
        ("I love to hike.", ["The user loves to hike."]),
        ("My wife and I love hiking.", ["The user loves hiking."]),
        ("I hate running.", ["The user hates running."]),
        # a goal the user is working at, a subject the user shares, an answer kept short
        ("I'm trying to quit smoking.", ["The user is trying to quit smoking."]),
        ("Me and my girlfriend just adopted a kitten called Pesto!", ["The user just adopted a kitten called Pesto."]),
        ("Keep it short from now on, please.", ["The user wants the assistant to keep answers short."]),
        # a feeling takes no fact's place: the clause after it is read
        (
            "I'm thrilled to be joining! I teach piano to kids on weekends.",
            ["The user teaches piano to kids on weekends."],
        ),
        (
            "I'm so stoked to start next week, I just got a job as a paramedic!",
            ["The user just got a job as a paramedic."],
        ),
        (
            "Please stop suggesting recipes with coriander, I can't stand the stuff.",
            ["The user wants the assistant to stop suggesting recipes with coriander."],
        ),
    ],
)
def test_statements_become_standalone_third_person_facts(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        (
            "As a nurse on night shifts, how can I sleep better during the day?",
            ["The user is a nurse on night shifts."],
        ),
        (
            "Since I'm moving to Toronto in January, what winter coat should I buy?",
            ["The user is moving to Toronto in January."],
        ),
        ("Can you suggest a lens that fits my Fujifilm X-T4?", ["The user has a Fujifilm X-T4."]),
        (
            "I ran a half marathon last month and raised $300 for the shelter, any recovery tips?",
            ["The user ran a half marathon last month.", "The user raised $300 for the shelter."],
        ),
        (
            "By the way, I've kept my grandfather's watch in a drawer since he died, how do I clean it?",
            ["The user has kept their grandfather's watch in a drawer."],
        ),
    ],
)
def test_facts_said_in_passing_inside_a_question_or_request_are_kept_and_the_question_is_not(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    "turn",
    [
        "How do I reverse a linked list?",
        "Write me a haiku about autumn.",
        "My colleague Dr. Alvarez prefers tea.",
        "My husband thinks I work too much.",
        "If I were rich I'd live in Monaco.",
        "Maybe I'll learn to surf someday.",
        "I think my neighbour is a spy.",
        "Imagine I'm a pirate captain.",
        "My mum always says 'never trust a dry river'.",
        'He told me "I live in Paris now" and left.',
        "Here is my code:\n```python\nI = 'live in Lisbon'\n```\nwhy does it fail?",
        "Why does my query fail when I pass an empty list?",
        "This is slow: SELECT * FROM orders WHERE status = 'open'; how can I speed it up?",
        "I love this series.",
        "I can't stand it.",
        "I'm so tired today.",
        "I'm over the moon!",
        "I'm trying to figure out why my printer keeps jamming.",
        "Running helps me stay focused.",
        "Keep it up!",
        "I like to think so.",
        "I'd love to help.",
        "I'm so grateful to you and Marta.",
        "We're both hooked on sudoku.",
        "I'm still unpacking boxes.",
        "Shellfish make me sick, I'm allergic.",
        "Why does my Rust borrow checker complain about this closure?",
    ],
)
def test_questions_requests_other_people_fancies_quotes_code_and_dangling_words_write_nothing(turn):
    assert extract_facts(parse_turn(turn)) == []


@pytest.mark.parametrize(
    "turn",
    ["Please forget that I live in Porto.", "Forget what I said about my job.", "Don't remember this, please."],
)
def test_a_request_to_forget_writes_nothing(turn):
    assert grammar.is_forget_request(grammar.analyse(turn))
    assert extract_facts(parse_turn(turn)) == []


def test_a_statement_about_forgetting_is_not_a_request():
    assert not grammar.is_forget_request(grammar.analyse("I always forget my keys."))


def test_another_language_falls_back_to_the_multilingual_patterns():
    assert extract_facts(parse_turn("Ich wohne in Berlin.")) == ["The user lives in Berlin."]
    assert extract_facts(parse_turn("Olá, o meu nome é Inês.")) == ["The user's name is Inês."]


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("Last Friday I went to a council meeting.", ["The user went to a council meeting on 5 May 2023."]),
        ("We got married last June in Accra.", ["The user got married in June 2022 in Accra."]),
        ("I started painting two years ago.", ["The user started painting in 2021."]),
        ("I'm moving to Toronto in January.", ["The user is moving to Toronto in January 2024."]),
        ("I've lived in Accra for three years.", ["The user has lived in Accra for three years."]),
    ],
)
def test_relative_time_words_become_the_dates_they_meant_when_the_turn_was_said(turn, facts):
    assert extract_facts(parse_turn(turn, said_on=date(2023, 5, 8))) == facts  # a Monday


@pytest.mark.parametrize(
    ("fact", "turn", "worded"),
    [
        (
            "The user went to a council meeting on 5 May 2023.",
            "Last Friday I went to a council meeting.",
            "The user went to a council meeting Last Friday.",
        ),
        (
            "The user started painting in 2021.",
            "I started painting two years ago.",
            "The user started painting two years ago.",
        ),
        (
            "The user is moving to Toronto in January 2024.",
            "I'm moving to Toronto in January.",
            "The user is moving to Toronto in January.",
        ),
        # a date no time word of the turn means stays
        ("The user went to a council meeting on 4 May 2023.", "Last Friday I went to a council meeting.", None),
        ("The user started painting in 2019.", "I started painting in 2019.", None),
    ],
)
def test_a_dated_fact_is_put_back_in_its_turns_time_words(fact, turn, worded):
    from memoryapp.timewords import as_worded

    assert as_worded(fact, turn, date(2023, 5, 8)) == (worded or fact)
    assert as_worded(fact, turn, None) == fact


@pytest.mark.django_db
def test_a_fact_is_dated_by_its_turn_in_the_write_path(alice):
    from chat.models import Turn
    from memoryapp.models import Memory
    from memoryapp.write import remember
    from tests.factories import user_turn

    turn = user_turn(alice, "I went to the support group yesterday.")
    Turn.objects.filter(pk=turn.pk).update(created_at=datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    turn.refresh_from_db()
    assert remember(alice, turn).stored == 1
    assert Memory.objects.get(user=alice).text == "The user went to the support group on 7 May 2023."


@pytest.mark.django_db
def test_a_dated_fact_from_one_clause_of_a_long_turn_passes_the_gate_in_the_turns_words(alice):
    """The date costs the fact its likeness to the clause ("on 11 August 2023" against "last
    Friday"); compared in the turn's own words it is the clause."""
    from chat.models import Turn
    from memoryapp.models import Memory
    from memoryapp.write import remember
    from tests.factories import user_turn

    turn = user_turn(
        alice,
        "Wow, glad you had a blast at the concert. A lot's happened since we talked. I went to a pride "
        "parade last Friday and it was awesome - so much energy and love everywhere. Really made me proud.",
    )
    Turn.objects.filter(pk=turn.pk).update(created_at=datetime(2023, 8, 14, 13, 0, tzinfo=UTC))
    turn.refresh_from_db()
    assert remember(alice, turn).stored >= 1
    assert "The user went to a pride parade on 11 August 2023." in Memory.objects.filter(user=alice).values_list(
        "text", flat=True
    )


@pytest.mark.parametrize(
    ("turn", "english"),
    [
        ("Mój mąż jest pilotem i ciągle lata do Madrytu.", False),  # Polish "i" is "and"
        ("Dzięki, to wszystko na dziś.", False),
        ("Ich bin am Montag in Köln.", False),
        ("I moved to Zürich last year.", True),
        ("i think so", True),
        # in plain ASCII, a language identifier decides between English and the languages of "i"
        ("Jag bor i Stockholm och jobbar som barnmorska.", False),  # Swedish "i" is "in"
        ("Ho due gatti e i miei genitori abitano a Bari.", False),  # Italian "i" is "the"
        ("i work nights lol", True),
        ("i am a nurse", True),  # no other language has both "i" and "am"
    ],
)
def test_words_english_shares_with_other_languages_do_not_make_a_turn_english(turn, english):
    assert grammar.looks_english(grammar.analyse(turn)) is english


def test_a_verb_the_tagger_reads_as_a_noun_after_and_is_its_own_clause():
    assert extract_facts(parse_turn("I live in Novosibirsk and work as an engineer.")) == [
        "The user lives in Novosibirsk.",
        "The user works as an engineer.",
    ]
    assert extract_facts(parse_turn("I eat fish and rice at home.")) == ["The user eats fish and rice at home."]


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("I'm a nurse in Leeds and I love it.", ["The user is a nurse.", "The user works in Leeds."]),
        ("I'm a law student in Kraków.", ["The user is a law student.", "The user studies in Kraków."]),
        (
            "I work as a sound engineer at a theatre in Glasgow.",
            ["The user works as a sound engineer at a theatre.", "The user works in Glasgow."],
        ),
        # no room for a third fact: the job keeps its place
        ("I'm a nurse in Leeds and I have two cats.", ["The user is a nurse in Leeds.", "The user has two cats."]),
        # where the user lives is a home, not a job's place; a place that is not a name stays in the job
        ("I live in Leeds.", ["The user lives in Leeds."]),
        ("I'm a teacher in a small village school.", ["The user is a teacher in a small village school."]),
    ],
)
def test_a_job_in_a_place_is_two_facts_when_there_is_room(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("Just moved to Berlin last month.", ["The user lives in Berlin."]),
        ("Went hiking with my dog yesterday.", ["The user went hiking with their dog on 7 May 2023."]),
        ("Currently learning Rust for work.", ["The user is currently learning Rust for work."]),
        ("Been to Paris twice.", ["The user has been to Paris twice."]),
        ("Got a new puppy.", ["The user got a new puppy."]),
        ("Grew up in Cork but haven't been back in ages.", ["The user grew up in Cork."]),
        # the left-out subject is not the speaker, or the sentence says only how they are
        ("Thanks! Excited for the future!", []),
        ("Made my day!", []),
        ("Hiking to the top was awesome!", []),
        ("Gotta check the floor quality too.", []),
        ("Been a busy week.", []),
        ("Loving the support!", []),
        ("Happened last week.", []),
        ("Trabalho de dia e estudo direito à noite.", []),
        ("Never been there before. Fascinated by the traditions.", []),
    ],
)
def test_a_sentence_that_leaves_out_its_i_is_read_with_it(turn, facts):
    assert extract_facts(parse_turn(turn, said_on=date(2023, 5, 8))) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("I'm lucky to have my husband and kids; they keep me motivated.", ["The user has a husband and kids."]),
        ("I am so grateful to have a supportive family.", ["The user has a supportive family."]),
        ("I'm blessed to have two amazing daughters.", ["The user has two amazing daughters."]),
        ("I'm blessed to have my furry friends in my life.", ["The user has furry friends in their life."]),
        ("I'm proud to be a nurse.", ["The user is a nurse."]),
        # the feeling alone, or what it is about only for the moment
        ("I'm sorry to be a bother.", []),
        ("I'm happy to be here.", []),
        ("I'm glad to have you as a friend.", []),
    ],
)
def test_what_a_feeling_says_the_user_has_or_is_is_kept_without_the_feeling(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("My son is 4 and obsessed with dinosaurs, any book ideas?", ["The user's son is 4 years old."]),
        ("My daughter just turned 12.", ["The user's daughter is 12 years old."]),
        ("My daughter is ten years old.", ["The user's daughter is ten years old."]),
        ("Our dog is 9 years old and getting stiff in the mornings.", ["The user's dog is 9 years old."]),
        ("My son Zaid is ten years old and loves football.", ["The user's son Zaid is ten years old."]),
        ("Sorry, my son is 5, not 4.", ["The user's son is 5 years old."]),
        (
            "No, my daughter is not ten years old, she is eleven years old.",
            ["The user's daughter is eleven years old."],
        ),
        ("My son is not 4 yet.", []),
        ("My son is 4 minutes late.", []),
        ("Is my son 4?", []),
        ("If my daughter were 18 she could vote, right?", []),
    ],
)
def test_the_age_of_a_relation_or_pet_is_kept(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("Oscar, my guinea pig. He's been great.", ["The user's guinea pig is named Oscar."]),
        ("Meet Luna, my cat!", ["The user's cat is named Luna."]),
        ("That's Bella, my daughter, at her graduation.", ["The user's daughter is named Bella."]),
        ("My dog Max loves the beach.", ["The user's dog is named Max."]),
        ("Pepper, my old beagle, chewed through the sofa last night.", ["The user's beagle is named Pepper."]),
        ("Sarah, my boss, is annoying.", []),  # a boss is someone the user knows, not theirs to name
    ],
)
def test_a_relation_or_pet_named_in_passing_is_kept_by_name(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("I have an allergy to nuts.", ["The user has an allergy to nuts."]),
        ("I have an allergy to dry fruits.", []),  # "to dry" parsed as a verb: an allergy to nothing
        ("I have a phobia of spiders.", ["The user has a phobia of spiders."]),
        # "there is" has no subject to borrow from the clause before
        ("As I said, I am vegan, so there is no cheese.", ["The user is vegan."]),
    ],
)
def test_a_fact_says_what_an_allergy_is_to_and_never_borrows_a_subject_for_there_is(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("What games can my six-year-old play on a rainy day?", ["The user has a six-year-old child."]),
        ("Is it normal for our 2-year-old to wake up at 5am?", ["The user has a 2-year-old child."]),
        ("My 8 yr old wants a phone.", ["The user has an 8-year-old child."]),
        (
            "My 3 year old, my 6 year old and my 8 year old all hate broccoli.",
            ["The user has children aged 3, 6 and 8."],
        ),
        ("My 4 year old son loves trains, any museum tips?", ["The user has a 4-year-old son."]),
        ("Is my 6 year old girl too young for a sleepover?", ["The user has a 6-year-old daughter."]),
        ("Our 7-month-old daughter finally sleeps through the night!", ["The user has a 7-month-old daughter."]),
        ("Our 18-month-old twins never sleep.", ["The user has 18-month-old twins."]),
        # the age of a thing, an adult who may be anyone, someone else's child
        ("Is it worth repairing my 10 year old laptop?", []),
        ("My 80 year old keeps calling.", []),
        ("In my 30 year old self's opinion, it's fine.", []),
        ("My sister's 4 year old will not stop biting.", []),
    ],
)
def test_a_child_named_by_their_age_is_kept(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("I'm looking for a new apartment in Leeds.", ["The user is looking for a new apartment in Leeds."]),
        (
            "I'm still looking into counseling and mental health jobs.",
            ["The user is looking into counseling and mental health jobs."],
        ),
        # tonight's search, or "look" as "seem" or "await"
        ("I'm looking for a recipe for dinner.", []),
        ("I'm looking forward to the weekend.", []),
        ("I'm still working on it.", []),
    ],
)
def test_a_search_that_lasts_is_a_fact(turn, facts):
    assert extract_facts(parse_turn(turn)) == facts
