"""The gate's rules on the fact itself: a stored fact is an English sentence about the user."""

import pytest

from memoryapp.grammar import as_user_sentence, fact_problems, restated_question, without_address
from memoryapp.models import Memory
from memoryapp.parsed import parse_turn
from memoryapp.wording import as_said
from memoryapp.write import remember
from memoryapp.write.gate import gate_facts
from tests.factories import user_turn

pytestmark = pytest.mark.django_db


def _rejection(turn: str, fact: str) -> str:
    _, kept, rejected = gate_facts(parse_turn(turn), [fact])
    assert len(kept) + len(rejected) == 1
    return rejected[0].rejected_because if rejected else ""


@pytest.mark.parametrize(
    ("turn", "fact", "reason"),
    [
        # answers and definitions restate the turn's topic, so similarity alone keeps them
        ("What's the difference between a viola and a violin?", "A viola is larger than a violin.", "user"),
        ("My roommate Jess is obsessed with K-pop.", "The user's roommate Jess is obsessed with K-pop.", "knows"),
        ("My boss Karen wants the report by Friday.", "The user's boss is named Karen.", "knows"),
        ("Please answer me in Spanish from now on.", "The assistant answers in Spanish.", "user"),
        ("You always answer in Spanish, which I like.", "The user's assistant answers in Spanish.", "assistant"),
        # the user's passing view of the assistant is not a lasting fact about them
        ("Thanks, you're a lifesaver.", "The user thinks the assistant is a lifesaver.", "view of the assistant"),
        ("Great, that worked!", "The user is happy with the assistant's answer.", "view of the assistant"),
        # advice and guesses, and a question turned into a "fact"
        ("I work night shifts most weeks.", "The user should sleep 8 hours after a night shift.", "advice"),
        ("I'm thinking about a trip.", "The user might enjoy Lisbon.", "advice or a guess"),
        ("What is a vector clock?", "The user wants to know what a vector clock is.", "question"),
        ("Are you a bot or a human?", "The user is a human.", "asked of the assistant"),
        ("How do I get red wine out of a carpet?", "The user wants to get red wine out of a carpet.", "into a wish"),
        # what a turn asks for once, in whatever language it asked
        ("Kannst du mir ein Rezept für Apfelstrudel geben?", "The user wants a recipe for apple strudel.", "once"),
        ("¿Cuánto es el 15 % de 80?", "The user wants to calculate 15% of 80.", "once"),
        ("Any tips for my first marathon?", "The user needs tips for their first marathon.", "once"),
        # a relative's own life is theirs, as a colleague's is
        ("My brother Luca teaches maths in Turin.", "The user's brother teaches maths in Turin.", "brother"),
        ("Mi madre vive en Valencia.", "The user's mother lives in Valencia.", "mother"),
        # kind words to the other person, and the speaker's own "I" left in a fact
        ("I'm here for you, John.", "The user is here for you.", "listener"),
        ("I'm sure your drive will pay off!", "The user is sure your drive will pay off.", "listener"),
        ("I'm proud of what I achieved.", "The user is proud of what I achieved.", "speaker's own"),
        ("Glad I could help!", "The user is glad I could help.", "speaker's own"),
        ("I'm glad we have each other's backs.", "The user is glad we have each other's backs.", "speaker's own"),
        # a feeling is true the day it is said, and "both" of the user alone is two people
        ("We closed on the flat and I'm over the moon!", "The user is over the moon.", "feeling"),
        ("Thanks so much, I'm really grateful to you and Marta.", "The user is grateful to Marta.", "feeling"),
        ("I'm so stoked to start the new job, tips for day one?", "The user is stoked to start a new job.", "feeling"),
        ("My daughter won the spelling bee, I'm so proud!", "The user feels proud of their daughter.", "feeling"),
        ("We're both on night shifts this month.", "The user is both on night shifts.", "someone else together"),
        ("My sister and I cook a lot, we make a great team.", "The user makes a great team.", "someone else together"),
        ("Book club is fun, we meet every other Thursday.", "The user meets every other Thursday.", "together"),
        # an episode of one day, a body's state today and a move with no place are over or empty
        ("Took the dog out, then had a long lunch with Ana.", "The user had a long lunch with Ana.", "once and over"),
        ("Uf, el lunes tuve reuniones todo el día.", "The user has had meetings all day on Monday.", "once and over"),
        ("Went bouldering, my fingers are wrecked.", "The user's fingers are wrecked.", "body"),
        ("My calves are so sore after the run.", "The user's calves are sore.", "body"),
        ("We moved again, it's chaos.", "The user moved again in May 2024.", "not where to"),
        ("Covered three extra shifts this week, I'm done.", "The user covered three extra shifts.", "once and over"),
        ("On Tuesday my car broke down, ugh.", "On Tuesday the user's car broke down.", "once and over"),
        ("My laptop crashed this morning, any tips?", "The user's laptop crashed this morning.", "once and over"),
        ("Ugh, I'm allergic and my eyes are streaming.", "The user has allergic eyes.", "body"),
        # what a turn that only asks, and never says "I" or "my", presumes of the user
        (
            "Is `git rebase -i HEAD~3` safe on a shared branch?",
            "The user is using `git rebase -i HEAD~3`.",
            "only asks",
        ),
        ("¿Por qué falla `df.merge(x)`?", "The user calls `df.merge(x)` in their code.", "only asks"),
        ("Is oat milk OK for vegans?", "The user is vegan.", "says nothing of the user"),
        # where the user once was, a visit or a home, and neither when nor for how long
        (
            "Wir wohnen seit zwei Jahren in Leipzig, vorher waren wir in Dresden.",
            "The user was in Dresden.",
            "once was",
        ),
        # "no longer", "before that" and a request, in the turn's own language
        ("Ya no trabajo en el banco, ahora enseño matemáticas.", "The user works at a bank.", "no longer"),
        ("Ich wohne nicht mehr in Köln, seit Juni bin ich in Bonn.", "The user lives in Cologne.", "no longer"),
        (
            "Wir wohnen seit zwei Jahren in Leipzig, vorher waren wir in Dresden.",
            "The user lives in Dresden.",
            "before",
        ),
        ("¿Puedes darme una receta de paella?", "The user loves paella.", "only asks"),
        ("Kannst du mir ein Rezept für Apfelstrudel geben?", "The user likes apple strudel.", "only asks"),
        # a fact that breaks off where the extractor lost the rest of its phrase
        ("My teammates and I were thrilled.", "The user was thrilled their teammates and.", "mid-phrase"),
        ("I'm a huge fan of jazz.", "The user is a huge fan of.", "mid-phrase"),
        ("I play a game called Go.", "The user plays a game called.", "mid-phrase"),
        # a fact left in the turn's language
        ("Vivo en Madrid desde 2019.", "El usuario vive en Madrid.", "user"),
        ("毎朝コーヒーを三杯飲みます。", "ユーザーは毎朝コーヒーを三杯飲みます。", "English"),
    ],
)
def test_a_fact_not_about_the_user_is_rejected_whatever_its_similarity(turn, fact, reason):
    assert reason in _rejection(turn, fact)


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("I live in Lisbon with my wife.", "The user lives in Lisbon."),
        ("My son Mateo just turned seven.", "The user's son Mateo is seven years old."),
        ("My wife is called Sara.", "The user's wife is named Sara."),
        ("My husband is Tomás, we met in 2015.", "The user's husband is Tomás."),
        ("Our twins were born in 2021.", "The user's twins were born in 2021."),
        ("My dad lives with me.", "The user's dad lives with the user."),
        ("Our cat Miso hates the vacuum cleaner.", "The user's cat Miso hates the vacuum cleaner."),
        # a question may carry a fact in passing
        ("Can you suggest a cover for my Kindle Paperwhite?", "The user has a Kindle Paperwhite."),
        ("I use `pnpm` for everything, how do I update it?", "The user uses `pnpm`."),
        ("Is it weird that we still live in Glasgow?", "The user lives in Glasgow."),
        ("We're saving for a house, any budgeting apps?", "The user is saving for a house."),
        ("Vim user here, what's the best plugin manager?", "The user uses Vim."),
        ("Please always answer me in Spanish.", "The user wants the assistant to answer in Spanish."),
        ("Metric units for me, always.", "The user prefers the assistant to use metric units."),
        ("I expect you to always cite your sources.", "The user expects the assistant to cite sources."),
        ("My favourite editor is Neovim.", "The user's favourite editor is Neovim."),
        ("Call me Priya, and I'm always in UTC.", "Priya prefers UTC."),
        # "you" in a wish is the assistant; quoted words are a title, not the speaker
        ("I want you to answer in French.", "The user wants you to answer in French."),
        ('My favourite song is "I Will Survive".', 'The user\'s favourite song is "I Will Survive".'),
        ('I keep rereading "You Are Not So Smart".', 'The user keeps rereading "You Are Not So Smart".'),
        # a fear lasts; "both" that names both is one fact about the user
        ("Flying terrifies me, I'm scared of planes.", "The user is scared of flying."),
        ("I'm terrified of spiders, always have been.", "The user is terrified of spiders."),
        ("I'm interested in astronomy.", "The user is interested in astronomy."),
        ("I teach by day and paint by night.", "The user is both a teacher and a painter."),
        ("My sister and I both love hiking.", "The user and their sister both love hiking."),
        ("I have two kids, both in primary school.", "The user has two kids, both in primary school."),
        # a past "had" that changed a life, a habit, a body part that stays so, a move to a place
        ("We had a baby girl in April!", "The user had a baby girl in April."),
        ("I had my appendix out in 2019.", "The user had their appendix out in 2019."),
        ("I have choir practice every Wednesday.", "The user has choir practice every Wednesday."),
        ("I've had a cat named Pixel since 2015.", "The user has had a cat named Pixel since 2015."),
        ("My left eye is blind since birth.", "The user's left eye has been blind since birth."),
        ("We moved to Leeds in May.", "The user moved to Leeds in May."),
        ("We had our first baby in March!", "The user had their first baby in March."),
        ("We moved abroad in 2019.", "The user moved abroad in 2019."),
        ("I meet my mentor every Friday.", "The user meets their mentor every Friday."),
        ("I worked night shifts for ten years.", "The user worked night shifts for ten years."),
        ("I was in Lisbon for ten years before Porto.", "The user was in Lisbon for ten years."),
        ("I was born in Dresden.", "The user was born in Dresden."),
        # the value a turn in another language holds now, a fact that says what is past, a standing request
        ("Ich wohne nicht mehr in Köln, seit Juni bin ich in Bonn.", "The user lives in Bonn."),
        ("Je n'habite plus à Lyon.", "The user no longer lives in Lyon."),
        ("¿Puedes responderme siempre en español?", "The user wants the assistant to answer in Spanish."),
        # what the user did on one day, what befell a pet that day, and a habit on a weekday
        ("I went to the support group yesterday.", "The user went to the support group on 2 June 2024."),
        ("We got married on 12 May!", "The user got married on 12 May 2024."),
        ("Our dog died yesterday.", "The user's dog died on 2 June 2024."),
        ("I swim on Tuesdays.", "The user swims on Tuesdays."),
        ("I have bad knees.", "The user has bad knees."),
        # a phrase may end in a particle or a preposition left behind by its clause
        ("I love to dress up.", "The user loves to dress up."),
        ("I have so many books to choose from.", "The user has a lot of books to choose from."),
    ],
)
def test_a_fact_about_the_user_or_their_family_passes_the_form_rules(turn, fact):
    assert _rejection(turn, fact) == ""


@pytest.mark.parametrize(
    ("clause", "fact"),
    [
        ("How often should I walk my two greyhounds", "The user has two greyhounds."),
        ("How can I train for my first marathon in April", "The user is training for a marathon in April."),
        ("Do you know a vegan bakery near me, I'm vegan", "The user is vegan."),
        ("I want to learn Japanese before my trip", "The user wants to learn Japanese."),
    ],
)
def test_a_fact_a_question_carries_in_passing_is_not_the_question(clause, fact):
    assert restated_question(fact, clause) is None


def test_a_name_the_turn_gives_someone_else_is_not_the_users():
    assert "user" in _rejection("My friend Priya swears by UTC.", "Priya prefers UTC.")


@pytest.mark.parametrize(
    ("fact", "sentence"),
    [
        ("Uses a MacBook Pro", "The user uses a MacBook Pro."),
        ("Dislikes emoji in emails", "The user dislikes emoji in emails."),
        ("Was born in 1990", "The user was born in 1990."),
        ("Doesn't eat meat", "The user doesn't eat meat."),
        # not a fragment with its subject left out: unchanged
        ("A viola is larger than a violin.", "A viola is larger than a violin."),
        ("Her name is Dana.", "Her name is Dana."),
        ("The user lives in Porto.", "The user lives in Porto."),
        ("Vegetarian", "Vegetarian"),
    ],
)
def test_a_terse_fact_becomes_the_sentence_it_stands_for(fact, sentence):
    assert as_user_sentence(fact) == sentence


def test_a_models_terse_facts_are_stored_as_sentences_and_its_answers_are_not(alice, fake_llm):
    turn = "I do all my work on a MacBook Pro. Which is faster, an M2 or an M3 chip?"
    fake_llm.facts("Uses a MacBook Pro", "The M3 chip is faster than the M2.")
    assert remember(alice, user_turn(alice, turn)).stored == 1
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user uses a MacBook Pro."]


def test_the_word_a_turn_called_its_listener_by_is_no_part_of_a_models_fact(alice, fake_llm):
    fake_llm.facts("The user does not eat gluten, mom.")
    assert remember(alice, user_turn(alice, "I don't eat gluten, mom, I'm coeliac.")).stored == 1
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user does not eat gluten."]
    assert without_address("The user lives with their mum, dad.") == "The user lives with their mum, dad."


@pytest.mark.parametrize(
    "fact",
    [
        "The user wants to learn Japanese.",
        "The user wants to find a new job.",
        "The user can speak Mandarin.",
        "The user wants the assistant to give recipes in grams.",
        "The user needs a wheelchair.",
        "The user wants to solve a Rubik's cube in under a minute.",
    ],
)
def test_goals_and_abilities_are_facts(fact):
    assert fact_problems([fact]) == [None]


@pytest.mark.parametrize(
    ("fact", "said"),
    [
        ("The user is 40 years old.", "I am 40 years old."),
        ("The user's name is Priya.", "My name is Priya."),
        ("The user studies law.", "I study law."),
        ("The user always takes the bus.", "I always take the bus."),
        ("The user doesn't eat pork.", "I don't eat pork."),
        ("The user dislikes emoji in their emails.", "I dislike emoji in my emails."),
        ("The user moved to Leeds in 2026.", "I moved to Leeds in 2026."),
        ("The user went to a pride parade on 11 August 2023.", "I went to a pride parade on 11 August 2023."),
        ("The user got a cat named Bailey.", "I got a cat named Bailey."),
        ("The user wants the assistant to keep its answers short.", "Keep your answers short."),
        ("Priya prefers UTC.", None),
    ],
)
def test_a_fact_is_also_compared_as_the_user_would_have_said_it(fact, said):
    assert as_said(fact) == said


def test_a_short_statement_passes_in_the_first_person_and_a_reworded_invention_does_not():
    # "The user is 40 years old." scores under the gate against "I'm 40 years old." as written
    assert _rejection("I'm 40 years old.", "The user is 40 years old.") == ""
    assert "too far" in _rejection(
        "I work as a nurse at St Thomas' Hospital.", "The user is a board-certified cardiologist."
    )


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Soy arquitecta.", "The user is an architect."),
        ("Moro em Lisboa.", "The user lives in Lisbon."),
        ("私は東京に住んでいます。", "The user lives in Tokyo."),
    ],
)
def test_an_english_fact_from_a_turn_in_another_language_is_judged_by_the_multilingual_encoder(turn, fact):
    # all-MiniLM-L6-v2 scores these 0.02-0.22 against their turn: without it, all three are rejected
    assert _rejection(turn, fact) == ""


def test_an_invented_fact_from_a_turn_in_another_language_is_still_rejected():
    assert "too far" in _rejection("Hola, me llamo Lucía.", "The user works at Google.")


@pytest.mark.parametrize("fact", ["The user gotta be patient.", "The user is gonna move to Berlin."])
def test_what_the_user_is_gonna_do_is_not_a_lasting_fact(fact):
    assert fact_problems([fact]) == ["the fact is what the user means to do now, not a lasting fact"]


@pytest.mark.parametrize(
    "fact",
    [
        "The user can't handle them.",
        "The user still can't quite believe it.",
        "The user takes it out most weekends.",
        "The user has lived here for two years.",
        "The user has been there twice.",
        "The user practices for an hour every day.",
        "The user finishes in 2025.",
        "The user started in 2021.",
        "The user did in the week of 25 September 2023.",
    ],
)
def test_a_fact_that_leans_on_its_turn_for_what_it_means_is_rejected(fact):
    assert fact_problems([fact]) == ["the fact does not stand alone: it names something only its turn says"]


@pytest.mark.parametrize(
    "fact",
    [
        "The user has a vintage Vespa and rides it to work.",
        "The user's kids love soccer and the user coaches them.",
        "The user finds it hard to sleep after coffee.",
        "The user practises the piano for an hour every day.",
        "The user started painting in 2021.",
        "The user completed a PhD in 2019.",
        "The user does yoga.",
        "The user does well at school.",
    ],
)
def test_a_pronoun_with_something_in_the_fact_to_stand_for_is_fine(fact):
    assert fact_problems([fact]) == [None]


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Che ore sono a New York?", "The user wants the assistant to tell the current time in New York."),
        ("Can you translate 'cheers' into French?", "The user wants the assistant to translate 'cheers' into French."),
        ("东京的天气怎么样？", "The user wants the assistant to give the weather in Tokyo."),
    ],
)
def test_a_question_asked_once_is_not_a_standing_instruction(turn, fact):
    assert _rejection(turn, fact) == "the fact makes a question asked once a standing instruction"


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Could you always answer in French?", "The user wants the assistant to answer in French."),
        ("Please keep your answers short from now on.", "The user wants the assistant to keep its answers short."),
        ("I read on my phone. Can you keep answers short?", "The user wants the assistant to keep answers short."),
    ],
)
def test_an_instruction_said_to_stand_or_beside_a_statement_passes(turn, fact):
    assert _rejection(turn, fact) == ""


@pytest.mark.parametrize(
    ("turn", "fact", "value"),
    [
        ("I moved from Berlin to Lisbon in the spring.", "The user lives in Berlin.", "berlin"),
        ("Actually, scratch that, it's a Model Y, not a Model 3.", "The user drives a Tesla Model 3.", "3"),
        ("I no longer work at Deloitte, I joined a startup.", "The user works at Deloitte.", "deloitte"),
        ("I used to live in Glasgow, these days I'm in Dundee.", "The user lives in Glasgow.", "glasgow"),
        ("My daughter is 11, not 10.", "The user's daughter is 10.", "10"),
        ("I've never been to Australia but I'd love to go.", "The user has been to Australia.", "australia"),
        ("We've been in Oslo for a year; before that we were in Bergen.", "The user lives in Bergen.", "bergen"),
        ("I worked at Google for five years, now I'm at Meta.", "The user works at Google.", "google"),
        ("I no longer work at the bank, now I teach maths.", "The user works at a bank.", "bank"),
        ("I was a teacher, now I'm a nurse.", "The user is a teacher.", "teacher"),
        # a small model's reading of "Ya no vivo en Sevilla", as the gate is given it
        ("I no live in Sevilla, I moved to Valencia in September.", "The user lives in Seville.", "seville"),
    ],
)
def test_a_value_the_turn_says_is_not_or_no_longer_the_users_is_rejected(turn, fact, value):
    assert _rejection(turn, fact) == f"the turn says {value!r} is not, or is no longer, the user's"


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("I moved from Berlin to Lisbon in the spring.", "The user moved from Berlin to Lisbon."),
        ("Actually, scratch that, it's a Model Y, not a Model 3.", "The user drives a Model Y."),
        ("I used to live in Glasgow, these days I'm in Dundee.", "The user used to live in Glasgow."),
        ("My daughter is 11, not 10.", "The user's daughter is 11."),
        ("I work at Google, not Meta.", "The user works at Google."),
        ("I'm from Berlin and still live there.", "The user is from Berlin."),
        ("I don't eat pork, so please leave it out.", "The user does not eat pork."),
        ("We've been in Oslo for a year; before that we were in Bergen.", "The user lives in Oslo."),
        ("I lived in Paris and now live in Rome.", "The user lives in Rome."),
        ("I was born in Lagos and live in London.", "The user is from Lagos."),
        ("I was a teacher, now I'm a nurse.", "The user is a nurse."),
        ("I no longer work at the bank, now I teach maths.", "The user teaches maths."),
    ],
)
def test_the_value_that_holds_and_a_fact_that_says_what_no_longer_holds_pass(turn, fact):
    assert _rejection(turn, fact) == ""


@pytest.mark.parametrize(
    ("turn", "fact", "reason"),
    [
        ("Remind me what a REST API is?", "The user is learning about REST APIs.", "the turn only asks"),
        ("Give me a recipe for banana bread?", "The user loves banana bread.", "the turn only asks"),
        ("Show me how to tie a bowline knot.", "The user is a sailor.", "the turn only asks"),
        (
            "I am learning to play flamenco guitar.",
            "The user is a professional flamenco guitarist.",
            "says more than the turn",
        ),
        ("We adopted a rescue greyhound in March.", "The user breeds greyhounds.", "says more than the turn"),
        ("I'm doing a part-time MBA at Warwick.", "The user has an MBA from Warwick.", "still working towards"),
        ("I'm studying for a law degree at Leeds.", "The user has a law degree from Leeds.", "still working towards"),
        ("I'm an accountant in Leeds.", "The user is an accountant at Deloitte in Leeds.", "names 'Deloitte'"),
        ("My name is Priya.", "The user's name is Priya Alvarez.", "names 'Alvarez'"),
        ("I'm a nurse and I love it.", "The user is a nurse at the NHS.", "names 'NHS'"),
        # the cost: a name the world adds to what the turn says
        ("Actually, scratch that, it's a Model Y, not a Model 3.", "The user drives a Tesla Model Y.", "names 'Tesla'"),
        (
            "This query is slow:\n```sql\nSELECT * FROM orders WHERE total > 100;\n```\nHow do I speed it up?",
            "The user's orders query is slow.",
            "code the turn shows",
        ),
        ("morning!", "The user is a morning person.", "only a greeting"),
        ("Buongiorno!", "The user is an early riser.", "only a greeting"),
        (
            "Don't save this, but I'm thinking of quitting my job.",
            "The user is thinking of quitting their job.",
            "asks not to be remembered",
        ),
    ],
)
def test_a_fact_that_claims_more_than_its_turn_says_is_rejected(turn, fact, reason):
    assert reason in _rejection(turn, fact)


@pytest.mark.parametrize(
    ("turn", "fact"),
    [
        ("Can you recommend a case for my Pixel 8?", "The user has a Pixel 8."),
        ("I'm a professional photographer.", "The user is a professional photographer."),
        ("I speak fluent Spanish.", "The user is fluent in Spanish."),
        ("I have a law degree and I'm doing a PhD in history.", "The user has a law degree."),
        ("I finished my MBA at Warwick last year.", "The user has an MBA from Warwick."),
        ("i live in lisbon and speak italian", "The user speaks Italian."),  # a name as the turn writes it
        ("Jo's my wife.", "The user's wife is named Jo."),
        ("I live in Malaga now.", "The user lives in Málaga."),
        ("Morning! I'm vegetarian, what can I cook?", "The user is vegetarian."),
        (
            "Here's my function:\n```python\ndef add(a, b):\n    return a + b\n```\nI write Python at work.",
            "The user writes Python at work.",
        ),
    ],
)
def test_a_fact_its_turn_says_in_as_many_words_passes(turn, fact):
    assert _rejection(turn, fact) == ""
