SELECT customer_id FROM source('nowhere')
