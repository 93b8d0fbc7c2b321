from django.urls import path

from memoryapp import views

app_name = "memoryapp"

urlpatterns = [
    path("<int:memory_id>/", views.memory_detail, name="memory_detail"),
]
