SELECT order_id, TO_TIMESTAMP(note) AS at_time FROM source('orders')
